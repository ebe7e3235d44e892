package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/view"
)

func viewCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "view",
		Usage:     "open the HTML report of a session in a browser",
		ArgsUsage: "SESSION [CASSETTE]",
		Description: "Writes the self-contained HTML report of SESSION (as export --format html does) to a\n" +
			"temporary file and opens it with $BROWSER, xdg-open or open; where there is no browser,\n" +
			"or with --no-open, it prints the file's path.",
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.BoolFlag{Name: "no-open", Usage: "only write the report and print its path"},
		},
		Action: func(c *cli.Context) error {
			path, ids, err := positional(c, 1)
			if err != nil {
				return err
			}
			if len(ids) == 0 {
				return usageErr("mcpvcr ls to see the sessions, then mcpvcr view N", "view needs a SESSION number")
			}
			id := ids[0]
			db, err := openPath(c, path)
			if err != nil {
				return err
			}
			defer db.Close()
			if _, err := db.Session(c.Context, id); err != nil {
				return failErr(fmt.Errorf("session %d: %w", id, err), "mcpvcr ls --cassette "+cassettePath(c)+" to see the sessions")
			}
			name, err := view.WriteTempHTML(c.Context, db, id)
			switch {
			case name == "" && err != nil:
				return failErr(err, "set TMPDIR to a writable directory")
			case err != nil:
				return failErr(err, "")
			}
			if !c.Bool("no-open") && view.Open(name, os.Getenv("BROWSER")) {
				fmt.Fprintf(e.stdout, "opened %s\n", name)
				return nil
			}
			fmt.Fprintf(e.stdout, "%s\n", name)
			return nil
		},
	}
}
