package main

import (
	"bufio"
	"fmt"
	"math"
	"os"

	"github.com/urfave/cli/v2"
)

func exportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write sessions as deterministic JSONL text",
		ArgsUsage: "[CASSETTE] [SESSION...]",
		Description: "Writes the named sessions (all when none is named) as JSONL: one record per line,\n" +
			"raw frame bytes kept exactly. The text is what cassettes/ commits for review, and\n" +
			"mcpvcr import (or replay --cassette FILE.jsonl) reads it back losslessly.",
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "format", Value: "jsonl", Usage: "output `FORMAT`: jsonl"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
		},
		Action: func(c *cli.Context) error {
			if f := c.String("format"); f != "jsonl" {
				return usageErr("mcpvcr export --format jsonl", "export format %q is not supported", f)
			}
			path, ids, err := positional(c, math.MaxInt)
			if err != nil {
				return err
			}
			db, err := openPath(c, path)
			if err != nil {
				return err
			}
			defer db.Close()
			for _, id := range ids {
				if _, err := db.Session(c.Context, id); err != nil {
					return failErr(fmt.Errorf("session %d: %w", id, err), "mcpvcr ls --cassette "+cassettePath(c)+" to see the sessions")
				}
			}
			out := e.stdout
			var file *os.File
			if p := c.String("output"); p != "" {
				file, err = os.Create(p)
				if err != nil {
					return failErr(fmt.Errorf("create %s: %w", p, err), "")
				}
				defer file.Close()
				out = file
			}
			bw := bufio.NewWriter(out)
			if err := db.Export(c.Context, bw, ids...); err != nil {
				return failErr(fmt.Errorf("export: %w", err), "")
			}
			if err := bw.Flush(); err != nil {
				return failErr(fmt.Errorf("export: %w", err), "")
			}
			if file != nil {
				if err := file.Close(); err != nil {
					return failErr(fmt.Errorf("export: %w", err), "")
				}
			}
			return nil
		},
	}
}
