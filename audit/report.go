package audit

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
)

// WriteText writes one line per finding and a summary line, with control
// characters from recorded data escaped.
func WriteText(w io.Writer, fs []Finding) error {
	for _, f := range fs {
		if _, err := fmt.Fprintf(w, "%s: %s [%s %s] %s\n  sent:     %s\n  required: %s\n  spec:     %s\n",
			f.Where(), f.Level, f.Rule, f.Level.Keyword(), f.Revision, termtext.Text(f.Sent), termtext.Text(f.Required), f.Section); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, "%d error(s), %d warning(s)\n", Errors(fs), len(fs)-Errors(fs))
	return err
}

// jsonFinding is a Finding with its level spelled out.
type jsonFinding struct {
	Finding
	Level string `json:"level"`
}

// WriteJSON writes {"findings": [...], "errors": N, "warnings": N}.
func WriteJSON(w io.Writer, fs []Finding) error {
	out := struct {
		Findings []jsonFinding `json:"findings"`
		Errors   int           `json:"errors"`
		Warnings int           `json:"warnings"`
	}{Findings: []jsonFinding{}, Errors: Errors(fs), Warnings: len(fs) - Errors(fs)}
	for _, f := range fs {
		out.Findings = append(out.Findings, jsonFinding{f, f.Level.String()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

type junitSuites struct {
	XMLName xml.Name     `xml:"testsuites"`
	Suites  []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Failures  []junitFailed `xml:"failure"`
}

type junitFailed struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes one test suite per session of sessions, one test case
// per rule that applied (rules), failed by each finding of it at error
// level; a warning is a failure of type "warning".
func WriteJUnit(w io.Writer, sessions []int64, rules map[int64][]*Rule, fs []Finding) error {
	var doc junitSuites
	for _, s := range sessions {
		suite := junitSuite{Name: "mcpvcr audit session " + strconv.FormatInt(s, 10)}
		for _, r := range rules[s] {
			c := junitCase{Name: r.ID, ClassName: "session" + strconv.FormatInt(s, 10)}
			for _, f := range fs {
				if f.Session == s && f.Rule == r.ID {
					c.Failures = append(c.Failures, junitFailed{Message: f.Where() + ": " + f.Sent, Type: f.Level.String(),
						Text: "sent: " + f.Sent + "\nrequired: " + f.Required + "\nspec: " + f.Section})
				}
			}
			if len(c.Failures) > 0 {
				suite.Failures++
			}
			suite.Cases = append(suite.Cases, c)
		}
		suite.Tests = len(suite.Cases)
		doc.Suites = append(doc.Suites, suite)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
