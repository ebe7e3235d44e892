package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

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
			f, err := os.CreateTemp("", fmt.Sprintf("mcpvcr-session-%d-*.html", id))
			if err != nil {
				return failErr(fmt.Errorf("create the report file: %w", err), "set TMPDIR to a writable directory")
			}
			bw := bufio.NewWriter(f)
			err = view.ExportHTML(c.Context, db, bw, id)
			if err == nil {
				err = bw.Flush()
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				return failErr(fmt.Errorf("write %s: %w", f.Name(), err), "")
			}
			if !c.Bool("no-open") {
				if opener := browserCommand(os.Getenv("BROWSER")); opener != nil {
					cmd := exec.Command(opener[0], append(opener[1:], f.Name())...)
					if err := cmd.Start(); err == nil {
						cmd.Process.Release() // the browser outlives mcpvcr
						fmt.Fprintf(e.stdout, "opened %s\n", f.Name())
						return nil
					}
				}
			}
			fmt.Fprintf(e.stdout, "%s\n", f.Name())
			return nil
		},
	}
}

// browserCommand returns the command that opens a file in the user's
// browser: $BROWSER, else the system's opener; nil if there is none.
func browserCommand(env string) []string {
	if env != "" {
		return strings.Fields(strings.Split(env, ":")[0])
	}
	var cands [][]string
	switch runtime.GOOS {
	case "darwin":
		cands = [][]string{{"open"}}
	case "windows":
		cands = [][]string{{"rundll32", "url.dll,FileProtocolHandler"}}
	default:
		cands = [][]string{{"xdg-open"}, {"wslview"}}
	}
	for _, c := range cands {
		if _, err := exec.LookPath(c[0]); err == nil {
			return c
		}
	}
	return nil
}
