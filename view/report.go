package view

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/store"
)

// ReportFormats are the formats WriteReports takes: diff.Formats and
// "html".
var ReportFormats = append(slices.Clone(diff.Formats), "html")

// WriteReports writes diff or verify reports to w in format: "html" as one
// page over the sessions they compare, read from db (ExportDiffHTML, each
// report passed as the JSON --format json writes), any other format as
// diff.Write writes it.
func WriteReports(ctx context.Context, w io.Writer, db *store.DB, format string, reports ...*diff.Report) error {
	if format != "html" {
		return diff.Write(w, format, reports...)
	}
	raws := make([]json.RawMessage, 0, len(reports))
	for _, r := range reports {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode a report: %w", err)
		}
		raws = append(raws, b)
	}
	return ExportDiffHTML(ctx, db, w, raws...)
}

// ExportFormats are the formats Export takes, and GoVCRFormats, which
// WriteGoVCR writes for one session.
var ExportFormats = []string{"jsonl", "har", "html", "go-vcr", "go-vcr-v2"}

// Export writes the sessions of db with the given IDs (all when none is
// given) to w in format: "jsonl" (store.DB.Export), "har"
// (store.DB.ExportHAR) or "html" (ExportHTML). Writes to w are buffered
// and flushed before Export returns.
func Export(ctx context.Context, db *store.DB, w io.Writer, format string, ids ...int64) error {
	write := db.Export
	switch format {
	case "jsonl":
	case "har":
		write = db.ExportHAR
	case "html":
		write = func(ctx context.Context, w io.Writer, ids ...int64) error { return ExportHTML(ctx, db, w, ids...) }
	default:
		return fmt.Errorf("export format %q is not supported", format)
	}
	bw := bufio.NewWriter(w)
	if err := write(ctx, bw, ids...); err != nil {
		return err
	}
	return bw.Flush()
}

// IsTerminal reports whether w is a terminal, where a timeline may be
// coloured (Options.Color): not a pipe, a file or a buffer.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
