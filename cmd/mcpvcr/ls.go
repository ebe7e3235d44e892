package main

import (
	"fmt"
	"slices"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/verify"
	"github.com/mcpvcr/mcpvcr/view"
)

func lsCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "ls",
		Usage:     "list the sessions in a cassette",
		ArgsUsage: "[CASSETTE]",
		Description: "Prints one line per session: its number (what show, replay, verify and export take),\n" +
			"name, transport, protocol revision and era, when it started, how long it lasted (\"open\"\n" +
			"while it is still being recorded) and the server it was recorded from.\n" +
			"   mcpvcr ls bug.db\n" +
			"--format json prints the same as one JSON array, for scripts. The runs verify --keep kept\n" +
			"(sessions labelled mcpvcr.verify-of) are left out unless --all is given; a line says how many.",
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text or json"},
			&cli.BoolFlag{Name: "all", Aliases: []string{"a"}, Usage: "list verify runs too"},
		},
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if format != "text" && format != "json" {
				return usageErr("--format text or --format json", "--format %q is not text or json", format)
			}
			path, _, err := positional(c, 0)
			if err != nil {
				return err
			}
			db, err := openPath(c, path)
			if err != nil {
				return err
			}
			defer db.Close()
			ss, err := db.Sessions(c.Context)
			if err != nil {
				return failErr(fmt.Errorf("list sessions: %w", err), "")
			}
			runs := 0
			if !c.Bool("all") {
				ss = slices.DeleteFunc(ss, func(s store.Session) bool {
					if s.Labels[verify.LabelVerifyOf] != "" {
						runs++
						return true
					}
					return false
				})
				if runs > 0 {
					defer fmt.Fprintf(e.stderr, "mcpvcr: %s of verify left out; mcpvcr ls --all lists them\n", termtext.Count(runs, "run"))
				}
			}
			if format == "json" {
				return view.WriteSessionsJSON(e.stdout, ss)
			}
			if len(ss) == 0 && runs == 0 {
				fmt.Fprintf(e.stderr, "cassette %s holds no sessions yet\n", cassettePath(c))
				return nil
			}
			return view.WriteSessions(e.stdout, ss)
		},
	}
}
