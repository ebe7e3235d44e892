package diff

import (
	"fmt"
	"io"
	"strconv"

	"github.com/mcpvcr/mcpvcr/internal/sarif"
)

// SARIF 2.1.0 (the OASIS Static Analysis Results Interchange Format), the
// subset a comparison needs: one run, one result per difference, each
// located logically at the session, request and JSON path it concerns.

// SARIFSchema is the schema URI written into SARIF reports (the same as
// internal/sarif's, which writes them; spelled out here, as a public
// constant holds no internal name).
const SARIFSchema = "https://json.schemastore.org/sarif-2.1.0.json"

// Location is where a recorded frame is in a file: the file (as a URI
// reference, such as a path relative to the repository) and, in a text
// file such as a JSONL export, its line (from 1; 0 for none).
type Location struct {
	URI  string
	Line int
}

// Locator finds frame seq of recorded session (seq 0: the session
// itself) in the file the reports were made from.
type Locator func(session, seq int64) Location

// sarifRules are the kinds of result, by rule id.
var sarifRules = []sarif.Rule{
	{ID: "mcpvcr/changed", ShortDescription: sarif.Message{Text: "An answer differs from the recorded one at a JSON path."}},
	{ID: "mcpvcr/unanswered", ShortDescription: sarif.Message{Text: "A request the recorded server answered got no answer."}},
	{ID: "mcpvcr/missing", ShortDescription: sarif.Message{Text: "A recorded request was not sent in the new session."}},
	{ID: "mcpvcr/extra", ShortDescription: sarif.Message{Text: "The new session sent a request the recording lacks."}},
	{ID: "mcpvcr/server-traffic", ShortDescription: sarif.Message{Text: "What the server sent on its own (requests, notifications) differs."}},
	{ID: "mcpvcr/skipped", ShortDescription: sarif.Message{Text: "A tool call was not sent: the write guard kept it from a live server."}},
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
	return WriteSARIFAt(w, nil, reports...)
}

// WriteSARIFAt is WriteSARIF with each result located physically too,
// as code-scanning views require: the frame of the request it concerns,
// where loc finds it (the recorded session's, or the new session's for a
// request only it sent). With loc nil, the artifact is named
// mcpvcr-session-N, with no line.
func WriteSARIFAt(w io.Writer, loc Locator, reports ...*Report) error {
	if loc == nil {
		loc = func(session, _ int64) Location { return Location{URI: sarif.SessionArtifact(session)} }
	}
	run := sarif.Run{Tool: sarif.Tool{Driver: sarif.Driver{Name: "mcpvcr", InformationURI: "https://github.com/mcpvcr/mcpvcr", Rules: sarifRules}}, Results: []sarif.Result{}}
	add := func(r *Report, rd *RequestDiff, rule, path, text string) {
		session := "session " + strconv.FormatInt(r.Old.ID, 10)
		fq := session + "/" + rd.Label()
		if path != "" {
			fq += "/" + path
		}
		at := loc(r.Old.ID, rd.Seq)
		if rd.Seq == 0 && rd.NewSeq != 0 {
			at = loc(r.New.ID, rd.NewSeq)
		}
		res := sarif.Result{RuleID: rule, RuleIndex: sarifRuleIndex(rule), Kind: "fail", Level: "error",
			Message:             sarif.Message{Text: text},
			Locations:           []sarif.Location{{PhysicalLocation: sarif.At(at.URI, at.Line), LogicalLocations: []sarif.LogicalLocation{{Name: rd.Label(), FullyQualifiedName: fq, Kind: "member"}}}},
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
	return sarif.Write(w, run)
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
