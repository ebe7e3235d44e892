package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/audit"
	"github.com/mcpvcr/mcpvcr/store"
)

func auditCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "audit",
		Usage:     "report the rules of its revision that a recorded client broke",
		ArgsUsage: "[SESSION...] [CASSETTE]",
		Description: "Reads the client traffic of each SESSION (every session when none is named) and reports\n" +
			"every rule of the session's protocol revision it breaks: the rule, the frame (session,\n" +
			"stream and seq, as mcpvcr show numbers them), what was sent, what the revision requires,\n" +
			"and the specification section. A broken MUST is an error, a broken SHOULD a warning.\n" +
			"Exit 0: no error (warnings allowed); 1: at least one error (with --fail-on warning, at\n" +
			"least one finding).\n\n" +
			"   mcpvcr audit --cassette bug.db\n" +
			"   mcpvcr audit 3 --rules http --skip http/protocol-version-absent-on-initialize\n" +
			"   mcpvcr audit bug.jsonl --format sarif -o audit.sarif\n\n" +
			"--rules and --skip take rule ids or areas (http, modern, lifecycle, ...). The rules:\n" + ruleList(),
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "report `FORMAT`: text, json, junit or sarif"},
			&cli.StringSliceFlag{Name: "rules", Usage: "check only these `RULES` (ids or areas, comma-separated or repeated)"},
			&cli.StringSliceFlag{Name: "skip", Usage: "do not check these `RULES` (ids or areas)"},
			&cli.StringFlag{Name: "fail-on", Value: "error", Usage: "exit 1 on a finding of this `LEVEL` or worse: error, or warning (a broken SHOULD fails too)"},
			outputFlag(),
		},
		Action: func(c *cli.Context) error {
			path, ids, err := positional(c, 1<<20)
			if err != nil {
				return err
			}
			format := c.String("format")
			switch format {
			case "text", "json", "junit", "sarif":
			default:
				return usageErr("--format text, json, junit or sarif", "--format %q is not text, json, junit or sarif", format)
			}
			failOn := c.String("fail-on")
			if failOn != "error" && failOn != "warning" {
				return usageErr("--fail-on error or --fail-on warning", "--fail-on %q is not error or warning", failOn)
			}
			rules, err := audit.Select(splitList(c.StringSlice("rules")), splitList(c.StringSlice("skip")))
			if errors.Is(err, audit.ErrUnknownRule) {
				return usageErr("mcpvcr audit --help lists the rules", "%v", err)
			}
			if err := checkOutput(c); err != nil {
				return err
			}
			db, err := openPath(c, path)
			if err != nil {
				return err
			}
			recs, err := db.Recordings(c.Context, ids...)
			db.Close()
			switch {
			case errors.Is(err, store.ErrNotFound):
				return noSessionErr(cassettePath(c), err)
			case err != nil:
				return failErr(err, "mcpvcr check "+cassettePath(c))
			}
			fs := audit.Audit(recs, rules)
			if err := writeAudit(c, e, cassettePath(c), format, recs, rules, fs); err != nil {
				return err
			}
			if audit.Errors(fs) > 0 || (failOn == "warning" && len(fs) > 0) {
				return errDiffer
			}
			return nil
		},
	}
}

// writeAudit writes the findings in format to -o's file or to stdout.
func writeAudit(c *cli.Context, e *env, input, format string, recs []*store.Recording, rules []*audit.Rule, fs []audit.Finding) error {
	write := func(w io.Writer) error {
		switch format {
		case "json":
			return audit.WriteJSON(w, fs)
		case "junit":
			var sessions []int64
			applied := map[int64][]*audit.Rule{}
			for _, rec := range recs {
				sessions = append(sessions, rec.Session.ID)
				for _, r := range rules {
					if r.Applies(rec) {
						applied[rec.Session.ID] = append(applied[rec.Session.ID], r)
					}
				}
			}
			return audit.WriteJUnit(w, sessions, applied, fs)
		case "sarif":
			loc := frameLocator(input)
			return audit.WriteSARIF(w, func(session, seq int64) audit.Location {
				l := loc(session, seq)
				return audit.Location{URI: l.URI, Line: l.Line}
			}, rules, fs)
		}
		return audit.WriteText(w, fs)
	}
	return writeOutput(c, e, input, write)
}

// splitList splits comma-separated flag values.
func splitList(vs []string) []string {
	var out []string
	for _, v := range vs {
		for _, s := range strings.Split(v, ",") {
			if s = strings.TrimSpace(s); s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// ruleList renders the rules for --help.
func ruleList() string {
	var b strings.Builder
	for _, r := range audit.Rules() {
		fmt.Fprintf(&b, "   %-46s %-7s %s\n", r.ID, r.Level.Keyword(), strings.Join(r.Revisions, ","))
	}
	return b.String()
}
