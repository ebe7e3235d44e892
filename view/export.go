package view

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// ExportFormats are the formats Export writes: "jsonl", the lossless
// interchange text (store.DB.Export) that mcpvcr import reads back; "har",
// an HTTP Archive (WriteHAR); "html", the self-contained report
// (WriteHTML); and the GoVCRFormats, which hold one session (EncodeGoVCR).
var ExportFormats = []string{"jsonl", "har", "html", "go-vcr", "go-vcr-v2"}

// Exporter writes sessions in one of ExportFormats. The zero Exporter is
// ready to use; Export is Exporter{}.Export.
type Exporter struct {
	// BaseURL is, for the go-vcr formats, the scheme and host the
	// recorded client addressed, such as http://127.0.0.1:3001. If empty,
	// the session's upstream's.
	BaseURL string
}

// Export writes the sessions of db with the given IDs (all when none is
// given) to w in format, one of ExportFormats: see Exporter.Export.
func Export(ctx context.Context, db *store.DB, w io.Writer, format string, ids ...int64) error {
	return Exporter{}.Export(ctx, db, w, format, ids...)
}

// Export writes the sessions of db with the given IDs (all when none is
// given) to w in format, one of ExportFormats. A go-vcr format takes
// exactly one session (else ErrOneSession), and a session go-vcr cannot
// hold is refused with a *GoVCRError before anything is written. Writes
// to w are buffered and flushed before Export returns.
func (x Exporter) Export(ctx context.Context, db *store.DB, w io.Writer, format string, ids ...int64) error {
	var write func(w io.Writer) error
	switch format {
	case "jsonl":
		write = func(w io.Writer) error { return db.Export(ctx, w, ids...) }
	case "har":
		write = func(w io.Writer) error { return exportHAR(ctx, db, w, ids...) }
	case "html":
		write = func(w io.Writer) error { return ExportHTML(ctx, db, w, ids...) }
	case "go-vcr", "go-vcr-v2":
		if len(ids) != 1 {
			return fmt.Errorf("export as %s: %w, got %d", format, ErrOneSession, len(ids))
		}
		write = func(w io.Writer) error {
			rec, err := db.Recording(ctx, ids[0])
			if err != nil {
				return fmt.Errorf("read session %d: %w", ids[0], err)
			}
			return EncodeGoVCR(w, format, rec, x.BaseURL)
		}
	default:
		return fmt.Errorf("export format %q is not supported", format)
	}
	var jw *termtext.JSONWriter
	if format == "jsonl" || format == "har" {
		// JSON text: C1 controls, bidi controls and zero-width
		// characters as \u escapes, the same values (see termtext.JSON).
		jw = termtext.NewJSONWriter(w)
		w = jw
	}
	bw := bufio.NewWriter(w)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if jw != nil {
		return jw.Flush()
	}
	return nil
}

// OneSession reports whether format holds exactly one session (the
// GoVCRFormats).
func OneSession(format string) bool { return slices.Contains(GoVCRFormats, format) }
