package audit

import (
	"io"
	"strconv"
	"strings"

	"github.com/mcpvcr/mcpvcr/internal/sarif"
)

// SARIF 2.1.0: one run, the rules as reportingDescriptors, one result per
// finding, located physically (as code-scanning views require) and
// logically (session, stream, seq).

// SARIFSchema is the schema URI written into SARIF logs.
const SARIFSchema = sarif.Schema

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

// WriteSARIF writes fs as one SARIF 2.1.0 log listing rules. Every result
// has a physicalLocation: where loc finds its frame, or with loc nil the
// artifact mcpvcr-session-N with no line.
func WriteSARIF(w io.Writer, loc Locator, rules []*Rule, fs []Finding) error {
	if loc == nil {
		loc = func(session, _ int64) Location { return Location{URI: sarif.SessionArtifact(session)} }
	}
	run := sarif.Run{Tool: sarif.Tool{Driver: sarif.Driver{Name: "mcpvcr audit", InformationURI: "https://github.com/mcpvcr/mcpvcr", Rules: []sarif.Rule{}}}, Results: []sarif.Result{}}
	index := map[string]int{}
	for i, r := range rules {
		index[r.ID] = i
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarif.Rule{ID: r.ID, ShortDescription: sarif.Message{Text: r.Description},
			HelpURI: helpURI(r.Section), DefaultConfiguration: &sarif.Config{Level: r.Level.String()}})
	}
	for _, f := range fs {
		i, ok := index[f.Rule]
		if !ok {
			i = -1
		}
		at := loc(f.Session, f.Seq)
		fq := f.Where()
		run.Results = append(run.Results, sarif.Result{RuleID: f.Rule, RuleIndex: i, Kind: "fail", Level: f.Level.String(),
			Message: sarif.Message{Text: f.Where() + ": sent " + f.Sent + "; " + f.Revision + " requires " + f.Required + " (" + f.Section + ")"},
			Locations: []sarif.Location{{PhysicalLocation: sarif.At(at.URI, at.Line),
				LogicalLocations: []sarif.LogicalLocation{{Name: "seq " + strconv.FormatInt(f.Seq, 10), FullyQualifiedName: fq, Kind: "member"}}}},
			PartialFingerprints: map[string]string{"mcpvcr/v1": fq + "|" + f.Rule},
		})
	}
	return sarif.Write(w, run)
}

// helpURI turns a section ("docs/specification/REV/PAGE.mdx §Heading")
// into the page's address on modelcontextprotocol.io.
func helpURI(section string) string {
	page, _, _ := strings.Cut(section, " ")
	page = strings.TrimSuffix(strings.TrimPrefix(page, "docs/"), ".mdx")
	return "https://modelcontextprotocol.io/" + page
}
