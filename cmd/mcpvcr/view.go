package main

import (
	"errors"
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
			"file in the temporary directory and opens it with $BROWSER, xdg-open or open; where there is\n" +
			"no browser, or with --no-open, it prints the file's path. Each session has one such file,\n" +
			"rewritten by each view; reports not viewed for a day are removed. When the browser cannot\n" +
			"be started or its opener fails, view prints the path and exits 3.",
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
				return noSessionErr(cassettePath(c), err)
			}
			name, err := view.WriteTempHTML(c.Context, db, id, cassettePath(c))
			switch {
			case name == "" && err != nil:
				return failErr(err, "set TMPDIR to a writable directory")
			case err != nil:
				return failErr(err, "")
			}
			if c.Bool("no-open") {
				fmt.Fprintf(e.stdout, "%s\n", name)
				return nil
			}
			err = view.Open(name, os.Getenv("BROWSER"))
			switch {
			case errors.Is(err, view.ErrNoBrowser):
				fmt.Fprintf(e.stdout, "%s\n", name)
				fmt.Fprintf(e.stderr, "mcpvcr: %v; the report is %s\ntry: open it in a browser, or set BROWSER to a browser command\n", err, name)
				return nil
			case err != nil:
				fmt.Fprintf(e.stdout, "%s\n", name)
				return failErr(fmt.Errorf("the report %s was written, but no browser opened it: %w", name, err),
					"open "+name+" in a browser, or set BROWSER to a browser command (BROWSER=firefox mcpvcr view ...)")
			}
			fmt.Fprintf(e.stdout, "opened %s\n", name)
			return nil
		},
	}
}
