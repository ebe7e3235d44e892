package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// SARIF 2.1.0 (the OASIS Static Analysis Results Interchange Format), the
// subset a comparison needs: one run, one result per difference, each
// located logically at the session, request and JSON path it concerns.

// SARIFSchema is the schema URI written into SARIF reports.
const SARIFSchema = "https://json.schemastore.org/sarif-2.1.0.json"

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
	ID               string       `json:"id"`
	ShortDescription sarifMessage `json:"shortDescription"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifResult struct {
	RuleID    string          `json:"ruleId"`
	RuleIndex int             `json:"ruleIndex"`
	Kind      string          `json:"kind"`
	Level     string          `json:"level"`
	Message   sarifMessage    `json:"message"`
	Locations []sarifLocation `json:"locations"`
	// PartialFingerprints keep a result's identity across runs, so that
	// code-scanning views track it.
	PartialFingerprints map[string]string `json:"partialFingerprints"`
}

type sarifLocation struct {
	LogicalLocations []sarifLogical `json:"logicalLocations"`
}

type sarifLogical struct {
	Name               string `json:"name"`
	FullyQualifiedName string `json:"fullyQualifiedName"`
	Kind               string `json:"kind"`
}

// sarifRules are the kinds of result, by rule id.
var sarifRules = []sarifRule{
	{"mcpvcr/changed", sarifMessage{"An answer differs from the recorded one at a JSON path."}},
	{"mcpvcr/unanswered", sarifMessage{"A request the recorded server answered got no answer."}},
	{"mcpvcr/missing", sarifMessage{"A recorded request was not sent in the new session."}},
	{"mcpvcr/extra", sarifMessage{"The new session sent a request the recording lacks."}},
	{"mcpvcr/server-traffic", sarifMessage{"What the server sent on its own (requests, notifications) differs."}},
	{"mcpvcr/skipped", sarifMessage{"A tool call was not sent: the write guard kept it from a live server."}},
}

func sarifRuleIndex(id string) int {
	for i, r := range sarifRules {
		if r.ID == id {
			return i
		}
	}
	return -1
}

// WriteSARIF writes reports as one SARIF 2.1.0 log: one run, one result
// per change, per request that went unanswered, missing or extra, and per
// call the write guard skipped (kind notApplicable). Results are located
// logically: session, request and JSON path.
func WriteSARIF(w io.Writer, reports ...*Report) error {
	run := sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "mcpvcr", InformationURI: "https://github.com/mcpvcr/mcpvcr", Rules: sarifRules}}, Results: []sarifResult{}}
	add := func(r *Report, rd *RequestDiff, rule, path, text string) {
		session := "session " + strconv.FormatInt(r.Old.ID, 10)
		fq := session + "/" + rd.Label()
		if path != "" {
			fq += "/" + path
		}
		res := sarifResult{RuleID: rule, RuleIndex: sarifRuleIndex(rule), Kind: "fail", Level: "error",
			Message:             sarifMessage{Text: text},
			Locations:           []sarifLocation{{LogicalLocations: []sarifLogical{{Name: rd.Label(), FullyQualifiedName: fq, Kind: "member"}}}},
			PartialFingerprints: map[string]string{"mcpvcr/v1": fq + "|" + rule},
		}
		if rule == "mcpvcr/skipped" {
			res.Kind, res.Level = "notApplicable", "none"
		}
		run.Results = append(run.Results, res)
	}
	for _, r := range reports {
		for _, rd := range r.all() {
			switch {
			case rd.Status == StatusSkipped:
				add(r, rd, "mcpvcr/skipped", "", fmt.Sprintf("%s: skipped: %s", rd.Label(), rd.Reason))
			case rd.Status == StatusChanged:
				rule := "mcpvcr/changed"
				if rd.Method == "" {
					rule = "mcpvcr/server-traffic"
				}
				for _, c := range rd.Changes {
					add(r, rd, rule, c.Path, fmt.Sprintf("%s: %s %s%s", rd.Label(), c.Kind, c.Path, sarifValues(c)))
				}
			case rd.Differs():
				add(r, rd, "mcpvcr/"+string(rd.Status), "", fmt.Sprintf("%s: %s: %s", rd.Label(), rd.Status, rd.Reason))
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(sarifLog{Schema: SARIFSchema, Version: "2.1.0", Runs: []sarifRun{run}})
}

// sarifValues renders a change's old and new values for a message.
func sarifValues(c Change) string {
	s := ""
	if c.Old != nil {
		s += " (was " + shown(c.Old) + ")"
	}
	if c.New != nil {
		s += " (now " + shown(c.New) + ")"
	}
	return s
}
