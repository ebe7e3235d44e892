package view

import (
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
	// Marks the differences found in several sessions, which the page
	// lists once, as the text report does.
	diff.Summarize(reports)
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
