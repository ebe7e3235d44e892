package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/outfile"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// outputFlag is -o, the same on every command that writes a report or an
// export.
func outputFlag() cli.Flag {
	return &cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write to `FILE` instead of stdout: created 0600, written whole or not at all, never the cassette itself"}
}

// checkOutput refuses, before any work, an -o that names the cassette.
func checkOutput(c *cli.Context) error {
	if p := c.String("output"); p != "" && errors.Is(outfile.Check(p, cassettePath(c)), outfile.ErrInput) {
		return usageErr("name another file with -o: an output is never the cassette it reads (nor its -wal or -shm)",
			"-o %s would overwrite the cassette %s it reads", p, cassettePath(c))
	}
	return nil
}

// writeReports writes reports in format to -o's file, or to stdout
// without one; the file is never the cassette at input.
func writeReports(ctx context.Context, c *cli.Context, e *env, db *store.DB, input, format string, reports ...*diff.Report) error {
	if p := c.String("output"); p != "" {
		f, err := createOutput(p, input)
		if err != nil {
			return err
		}
		defer f.Abort()
		if err := view.WriteReports(ctx, f, db, format, reports...); err != nil {
			return failErr(fmt.Errorf("write the report: %w", err), "")
		}
		if err := f.Commit(); err != nil {
			return failErr(err, "check that the folder of "+p+" is writable")
		}
		return nil
	}
	if err := view.WriteReports(ctx, e.stdout, db, format, reports...); err != nil {
		return failErr(fmt.Errorf("write the report: %w", err), "")
	}
	return nil
}
