package audit

import (
	"encoding/json"
	"io"
	"strconv"
	"strings"
)

// SARIF 2.1.0: one run, the rules as reportingDescriptors, one result per
// finding, located physically (as code-scanning views require) and
// logically (session, stream, seq).

// SARIFSchema is the schema URI written into SARIF logs.
const SARIFSchema = "https://json.schemastore.org/sarif-2.1.0.json"

// Location is where a recorded frame is in a file: the file as a URI
// reference and, in a text file such as a JSONL export, its line (from 1;
// 0 for none).
type Location struct {
	URI  string
	Line int
}

// Locator finds frame seq of a recorded session (seq 0: the session
// itself) in the file the findings were made from.
type Locator func(session, seq int64) Location

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool    sarifTool     `json:"tool"`
	Results []sarifResult `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

type sarifDriver struct {
	Name           string      `json:"name"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	ShortDescription     sarifMessage `json:"shortDescription"`
	HelpURI              string       `json:"helpUri,omitempty"`
	DefaultConfiguration sarifConfig  `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID              string            `json:"ruleId"`
	RuleIndex           int               `json:"ruleIndex"`
	Kind                string            `json:"kind"`
	Level               string            `json:"level"`
	Message             sarifMessage      `json:"message"`
	Locations           []sarifLocation   `json:"locations"`
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical  `json:"physicalLocation"`
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// WriteSARIF writes fs as one SARIF 2.1.0 log listing rules. Every result
// has a physicalLocation: where loc finds its frame, or with loc nil the
// artifact mcpvcr-session-N with no line.
func WriteSARIF(w io.Writer, loc Locator, rules []*Rule, fs []Finding) error {
	if loc == nil {
		loc = func(session, _ int64) Location {
			return Location{URI: "mcpvcr-session-" + strconv.FormatInt(session, 10)}
		}
	}
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "mcpvcr audit", InformationURI: "https://github.com/mcpvcr/mcpvcr", Rules: []sarifRule{}}}, Results: []sarifResult{}}
	index := map[string]int{}
	for i, r := range rules {
		index[r.ID] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: r.ID, ShortDescription: sarifMessage{r.Description},
			HelpURI: helpURI(r.Section), DefaultConfiguration: sarifConfig{r.Level.String()}})
	}
	for _, f := range fs {
		i, ok := index[f.Rule]
		if !ok {
			i = -1
		}
		at := loc(f.Session, f.Seq)
		phys := sarifPhysical{ArtifactLocation: sarifArtifact{URI: at.URI}}
		if at.Line > 0 {
			phys.Region = &sarifRegion{StartLine: at.Line}
		}
		fq := f.Where()
		run.Results = append(run.Results, sarifResult{RuleID: f.Rule, RuleIndex: i, Kind: "fail", Level: f.Level.String(),
			Message: sarifMessage{Text: f.Where() + ": sent " + f.Sent + "; " + f.Revision + " requires " + f.Required + " (" + f.Section + ")"},
			Locations: []sarifLocation{{PhysicalLocation: phys,
				LogicalLocations: []sarifLogical{{Name: "seq " + strconv.FormatInt(f.Seq, 10), FullyQualifiedName: fq, Kind: "member"}}}},
			PartialFingerprints: map[string]string{"mcpvcr/v1": fq + "|" + f.Rule},
		})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{run}})
}

// helpURI turns a section ("docs/specification/REV/PAGE.mdx §Heading")
// into the page's address on modelcontextprotocol.io.
func helpURI(section string) string {
	page, _, _ := strings.Cut(section, " ")
	page = strings.TrimSuffix(strings.TrimPrefix(page, "docs/"), ".mdx")
	return "https://modelcontextprotocol.io/" + page
}
