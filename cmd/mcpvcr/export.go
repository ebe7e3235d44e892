package main

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/outfile"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"

	"github.com/urfave/cli/v2"
)

func exportCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "export",
		Usage:     "write sessions as JSONL text, HAR or an HTML report, or one as a go-vcr cassette",
		ArgsUsage: "[CASSETTE] [SESSION...]",
		Description: "Writes the named sessions (all when none is named) as JSONL: one record per line,\n" +
			"raw frame bytes kept exactly. The text is what cassettes/ commits for review, and\n" +
			"mcpvcr import (or replay --cassette FILE.jsonl) reads it back losslessly.\n\n" +
			"--format har writes an HTTP Archive 1.2 file (one entry per HTTP exchange; SSE events in\n" +
			"_eventSourceMessages) that a browser's DevTools network panel imports.\n" +
			"--format html writes a self-contained HTML report (the timeline, every frame's bytes and\n" +
			"JSON, search and filters) that opens from file:// with no network; mcpvcr view opens one.\n\n" +
			"--format go-vcr writes one Streamable HTTP session as a go-vcr cassette (YAML) for test suites\n" +
			"built on go-vcr: v4's format 2 (go-vcr v3 and v4 read it), or with --format go-vcr-v2 go-vcr v2's\n" +
			"format 1. One interaction per HTTP exchange, in the order the requests started, SSE answers\n" +
			"as their raw event-stream text. Request/response fidelity\n" +
			"only: no event timing, no stream breaks. A session whose GET stream carried messages is\n" +
			"refused (go-vcr cannot stream); a GET stream that carried none is written as 405.\n\n" +
			"   mcpvcr export 3 --format go-vcr -o testdata/fixtures/session3.yaml\n\n" +
			"--rescue writes JSONL of what a damaged cassette still holds: it passes over each pack of\n" +
			"frames that does not decode, names it on stderr, and writes every other frame.\n" +
			"   mcpvcr export --rescue --cassette damaged.db -o rescued.jsonl",
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "format", Value: "jsonl", Usage: "output `FORMAT`: jsonl, har, html, or go-vcr or go-vcr-v2 (one HTTP session)"},
			&cli.StringFlag{Name: "base-url", Usage: "go-vcr: the scheme and host the client addressed, such as `URL` http://127.0.0.1:3001 (default: the session's upstream)"},
			outputFlag(),
			&cli.BoolFlag{Name: "rescue", Usage: "jsonl: write what can still be read of a damaged cassette, passing over the packs of frames that do not decode"},
		},
		Action: func(c *cli.Context) error {
			format := c.String("format")
			if !slices.Contains(view.ExportFormats, format) {
				return usageErr("mcpvcr export --format jsonl, har, html, go-vcr or go-vcr-v2", "export format %q is not supported", format)
			}
			path, ids, err := positional(c, math.MaxInt)
			if err != nil {
				return err
			}
			if c.Bool("rescue") && format != "jsonl" {
				return usageErr("mcpvcr export --rescue --cassette FILE -o rescued.jsonl", "--rescue writes JSONL, not %s", format)
			}
			if view.OneSession(format) {
				if err := oneSessionArgs(c, ids); err != nil {
					return err
				}
			}
			db, err := openPath(c, path)
			if err != nil {
				return err
			}
			defer db.Close()
			var transport store.Transport
			for _, id := range ids {
				s, err := db.Session(c.Context, id)
				if err != nil {
					return noSessionErr(cassettePath(c), err)
				}
				transport = s.Transport
			}
			out := io.Writer(e.stdout)
			var file *outfile.File
			if p := c.String("output"); p != "" {
				if file, err = createOutput(p, path); err != nil {
					return err
				}
				defer file.Abort()
				out = file
			}
			if c.Bool("rescue") {
				skipped, err := db.Rescue(c.Context, out, ids...)
				if err != nil {
					return failErr(fmt.Errorf("export: %w", err), "salvage what SQLite can still read: sqlite3 "+cassettePath(c)+" .recover | sqlite3 recovered.db, then mcpvcr check recovered.db")
				}
				for _, s := range skipped {
					fmt.Fprintf(e.stderr, "mcpvcr: export: passed over %s\n", termtext.Text(s))
				}
				if len(skipped) > 0 {
					fmt.Fprintf(e.stderr, "mcpvcr: export: rescued every frame but those of %s that do not decode\n", termtext.Count(int64(len(skipped)), "pack"))
				}
			} else {
				x := view.Exporter{BaseURL: c.String("base-url")}
				if err := x.Export(c.Context, db, out, format, ids...); errors.Is(err, store.ErrDamagedPack) {
					return failErr(err, rescueHint(cmp.Or(path, cassettePath(c))))
				} else if err != nil {
					return exportErr(err, transport, ids)
				}
			}
			if file != nil {
				if err := file.Commit(); err != nil {
					return failErr(fmt.Errorf("export: %w", err), "")
				}
			}
			return nil
		},
	}
}

// oneSessionArgs checks the arguments of a format that holds one session
// (go-vcr): one session, and --base-url a scheme and host.
func oneSessionArgs(c *cli.Context, ids []int64) error {
	if len(ids) != 1 {
		return usageErr("mcpvcr export SESSION --format go-vcr -o FILE.yaml (mcpvcr ls shows the sessions)", "--format %s writes one session, got %d", c.String("format"), len(ids))
	}
	if b := c.String("base-url"); b != "" {
		if u, err := url.Parse(b); err != nil || u.Scheme == "" || u.Host == "" {
			return usageErr("--base-url http://127.0.0.1:3001", "--base-url %q is not a scheme and host", b)
		}
	}
	return nil
}

// exportErr says what to do when Export failed: for a session go-vcr
// cannot hold, how else to replay it in Go tests.
func exportErr(err error, transport store.Transport, ids []int64) error {
	var ge *view.GoVCRError
	switch {
	case errors.As(err, &ge) && transport == store.Stdio:
		return failErr(err, "mcpvcrtest.Command replays a stdio session in Go tests, or mcpvcr replay "+a(ids[0])+" --stdio")
	case errors.As(err, &ge):
		return failErr(err, "mcpvcrtest.NewServer replays every stream of it in Go tests, or mcpvcr replay "+a(ids[0])+" --listen 127.0.0.1:8080")
	}
	return failErr(fmt.Errorf("export: %w", err), "")
}

// createOutput starts writing the output file path of a command that
// reads the cassette input: never the input itself (or its -wal or -shm),
// and through a temporary file that Commit renames to path.
func createOutput(path, input string) (*outfile.File, error) {
	f, err := outfile.Create(path, input)
	switch {
	case errors.Is(err, outfile.ErrInput):
		return nil, usageErr("name another file with -o: an output is never the cassette it reads (nor its -wal or -shm)",
			"-o %s would overwrite the cassette %s it reads", path, input)
	case err != nil:
		return nil, failErr(err, "check that the folder of "+path+" exists and is writable")
	}
	return f, nil
}
