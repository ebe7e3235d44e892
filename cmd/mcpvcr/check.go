package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/store"
)

func checkCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "check",
		Usage:     "check a cassette's integrity: the SQLite file, the order of its frames, their contents",
		ArgsUsage: "[CASSETTE]",
		Description: "Checks the cassette named by CASSETTE (or --cassette): a .db file or a .jsonl export.\n" +
			"   mcpvcr check bug.db\n" +
			"It runs SQLite's integrity check and foreign-key check, checks that the schema holds nothing\n" +
			"mcpvcr never creates (a trigger or view in a stranger's file runs on every read or write:\n" +
			"such a file is read no further), then checks that each session's\n" +
			"frames are numbered 1, 2, 3, ... without gaps, that their offsets never go back, that\n" +
			"each frame and resumed stream belongs to its session, and that each frame's bytes still\n" +
			"give the kind, id and method indexed for it. A recording cut short (kill -9, a full\n" +
			"disk) passes: what was committed is a gap-free prefix.",
		Flags: []cli.Flag{cassetteFlag()},
		Action: func(c *cli.Context) error {
			path, _, err := positional(c, 0)
			if err != nil {
				return err
			}
			if path == "" {
				path = cassettePath(c)
			}
			r, err := store.CheckFile(c.Context, path)
			if err != nil {
				return checkErr(path, err)
			}
			noteReadOnly(c, r.ReadOnly)
			if err := r.WriteText(e.stdout); err != nil {
				return failErr(fmt.Errorf("write the report: %w", err), "")
			}
			n := r.Problems()
			if n == 0 {
				return nil
			}
			hint := rescueHint(path)
			switch {
			case r.Format == store.JSONL:
				hint = "fix the lines named above (the file is text), or export the session again from its cassette"
			case r.Foreign != nil:
				hint = foreignHint(path, r.Foreign)
			case r.Failed(store.CheckSQLite):
				hint = "salvage what SQLite can still read: sqlite3 " + path + " .recover | sqlite3 recovered.db, then mcpvcr check recovered.db"
			}
			problems := "1 problem"
			if n > 1 {
				problems = fmt.Sprintf("%d problems", n)
			}
			return &exitError{code: exitDiffer, err: fmt.Errorf("cassette %s: %s found", path, problems), hint: hint}
		},
	}
}
