package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/view"
)

func exportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write sessions as JSONL text, HAR or an HTML report",
		ArgsUsage: "[SESSION...]",
		Description: "Writes the named sessions (all when none is named) as JSONL: one record per line,\n" +
			"raw frame bytes kept exactly. The text is what cassettes/ commits for review, and\n" +
			"mcpvcr import (or replay --cassette FILE.jsonl) reads it back losslessly.\n" +
			"--format har writes an HTTP Archive 1.2 file (one entry per HTTP exchange; SSE events in\n" +
			"_eventSourceMessages) that a browser's DevTools network panel imports.\n" +
			"--format html writes a self-contained HTML report (the timeline, every frame's bytes and\n" +
			"JSON, search and filters) that opens from file:// with no network; mcpvcr view opens one.",
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "format", Value: "jsonl", Usage: "output `FORMAT`: jsonl, har or html"},
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout"},
		},
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if format != "jsonl" && format != "har" && format != "html" {
				return usageErr("mcpvcr export --format jsonl (or har, or html)", "export format %q is not supported", format)
			}
			var ids []int64
			for i := range c.NArg() {
				id, err := sessionArg(c, i)
				if err != nil {
					return err
				}
				ids = append(ids, id)
			}
			db, err := openForRead(c)
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
			write := db.Export
			switch format {
			case "har":
				write = db.ExportHAR
			case "html":
				write = func(ctx context.Context, w io.Writer, ids ...int64) error { return view.ExportHTML(ctx, db, w, ids...) }
			}
			if err := write(c.Context, bw, ids...); err != nil {
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
