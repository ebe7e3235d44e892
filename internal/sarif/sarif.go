// Package sarif writes SARIF 2.1.0 logs (the OASIS Static Analysis
// Results Interchange Format): the subset mcpvcr's reports need, one run
// of one tool whose results are located physically (as code-scanning
// views require) and logically. audit and diff both write it.
package sarif

import (
	"encoding/json"
	"io"
	"strconv"
)

// Schema is the schema URI written into every log.
const Schema = "https://json.schemastore.org/sarif-2.1.0.json"

// Log is a SARIF log.
type Log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []Run  `json:"runs"`
}

// Run is one run of a tool and its results.
type Run struct {
	Tool    Tool     `json:"tool"`
	Results []Result `json:"results"`
}

// Tool is the tool of a run.
type Tool struct {
	Driver Driver `json:"driver"`
}

// Driver names the tool and lists its rules.
type Driver struct {
	Name           string `json:"name"`
	InformationURI string `json:"informationUri,omitempty"`
	Rules          []Rule `json:"rules"`
}

// Rule is a reportingDescriptor: a kind of result. If
// DefaultConfiguration is nil, none is written.
type Rule struct {
	ID                   string  `json:"id"`
	ShortDescription     Message `json:"shortDescription"`
	HelpURI              string  `json:"helpUri,omitempty"`
	DefaultConfiguration *Config `json:"defaultConfiguration,omitempty"`
}

// Config is a rule's default configuration.
type Config struct {
	Level string `json:"level"`
}

// Message is a plain-text message.
type Message struct {
	Text string `json:"text"`
}

// Result is one finding.
type Result struct {
	RuleID    string     `json:"ruleId"`
	RuleIndex int        `json:"ruleIndex"`
	Kind      string     `json:"kind"`
	Level     string     `json:"level"`
	Message   Message    `json:"message"`
	Locations []Location `json:"locations"`
	// PartialFingerprints keep a result's identity across runs, so that
	// code-scanning views track it.
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

// Location is where a result is: a place in a file, and the logical
// places (session, request, path) it concerns.
type Location struct {
	PhysicalLocation PhysicalLocation  `json:"physicalLocation"`
	LogicalLocations []LogicalLocation `json:"logicalLocations"`
}

// PhysicalLocation is a file and, if Region is not nil, a line of it.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
	Region           *Region          `json:"region,omitempty"`
}

// ArtifactLocation names a file by URI reference.
type ArtifactLocation struct {
	URI string `json:"uri"`
}

// Region is a line of a file, from 1.
type Region struct {
	StartLine int `json:"startLine"`
}

// LogicalLocation is a named place that is not in a file.
type LogicalLocation struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// At returns the physical location of file uri at line (from 1; 0 for
// none).
func At(uri string, line int) PhysicalLocation {
	p := PhysicalLocation{ArtifactLocation: ArtifactLocation{URI: uri}}
	if line > 0 {
		p.Region = &Region{StartLine: line}
	}
	return p
}

// SessionArtifact is the artifact that stands for a recorded session when
// no file is known: mcpvcr-session-N.
func SessionArtifact(session int64) string {
	return "mcpvcr-session-" + strconv.FormatInt(session, 10)
}

// Write writes run as a SARIF 2.1.0 log of that one run, indented, with
// no HTML escaping.
func Write(w io.Writer, run Run) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(Log{Schema: Schema, Version: "2.1.0", Runs: []Run{run}})
}
