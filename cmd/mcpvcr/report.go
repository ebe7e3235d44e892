package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"

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
	write := func(w io.Writer) error { return view.WriteReports(ctx, w, db, format, reports...) }
	if format == "sarif" {
		write = func(w io.Writer) error { return diff.WriteSARIFAt(w, frameLocator(input), reports...) }
	}
	return writeOutput(c, e, input, write)
}

// writeOutput has write write a report to -o's file, whole or not at
// all, or to stdout without one; the file is never the cassette at input.
func writeOutput(c *cli.Context, e *env, input string, write func(io.Writer) error) error {
	if p := c.String("output"); p != "" {
		f, err := createOutput(p, input)
		if err != nil {
			return err
		}
		defer f.Abort()
		if err := write(f); err != nil {
			return failErr(fmt.Errorf("write the report: %w", err), "")
		}
		if err := f.Commit(); err != nil {
			return failErr(err, "check that the folder of "+p+" is writable")
		}
		return nil
	}
	if err := write(e.stdout); err != nil {
		return failErr(fmt.Errorf("write the report: %w", err), "")
	}
	return nil
}

// frameLocator locates frames for SARIF results in the cassette at path:
// in a JSONL export, the line of each frame (the session's line for
// seq 0); in a SQLite cassette, the file alone. The URI is the path as
// given, so that a relative path stays relative to where verify ran.
func frameLocator(path string) diff.Locator {
	uri := (&url.URL{Path: filepath.ToSlash(path)}).String()
	var lines store.LineOf
	if format, _ := store.Sniff(path); format == store.JSONL {
		if f, err := os.Open(path); err == nil {
			defer f.Close()
			lines = store.FrameLines(f)
		}
	}
	return func(session, seq int64) diff.Location {
		return diff.Location{URI: uri, Line: lines.Line(session, seq)}
	}
}
