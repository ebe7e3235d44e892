package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/store"
)

func diffCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "diff",
		Usage:     "compare the answers of two recorded sessions",
		ArgsUsage: "A B",
		Description: "Pairs the client requests of sessions A and B in order, by method and normalised params,\n" +
			"and compares their answers with the rules of mcpvcr verify: the same noise is ignored (and\n" +
			"the noise mask stored with A), and requests only one session sent are reported.\n" +
			"Exit 0: no differences; 1: differences.\n\n" +
			"   mcpvcr diff 3 7\n" +
			"   mcpvcr diff 3 7 --ignore 'tools/call clock:result.content[*].text' --format junit\n\n" +
			"--ignore " + diff.PathSyntax,
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringSliceFlag{Name: "ignore", Usage: "do not count differences at `PATH` (repeatable; syntax above)"},
			formatFlag(),
			outputFlag(),
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return usageErr("mcpvcr diff A B, with session numbers from mcpvcr ls", "diff takes two sessions, got %d arguments", c.NArg())
			}
			a, err := sessionArg(c, 0)
			if err != nil {
				return err
			}
			b, err := sessionArg(c, 1)
			if err != nil {
				return err
			}
			format, extra, err := reportFlags(c)
			if err != nil {
				return err
			}
			if err := checkOutput(c); err != nil {
				return err
			}
			db, err := openForRead(c)
			if err != nil {
				return err
			}
			defer db.Close()
			r, err := diff.Sessions(c.Context, db, a, b, extra)
			switch {
			case errors.Is(err, store.ErrNotFound):
				return noSessionErr(cassettePath(c), err)
			case err != nil:
				return failErr(err, "")
			}
			if err := writeReports(c.Context, c, e, db, cassettePath(c), format, r); err != nil {
				return err
			}
			if r.Differs() {
				return errDiffer
			}
			return nil
		},
	}
}
