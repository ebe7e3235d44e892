package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// writeHTMLReports writes diff or verify reports as one HTML page over
// the sessions they compare, read from db. A report is passed on as the
// JSON --format json writes.
func writeHTMLReports[R any](ctx context.Context, w io.Writer, db *store.DB, reports []R) error {
	raws := make([]json.RawMessage, 0, len(reports))
	for _, r := range reports {
		b, err := json.Marshal(r)
		if err != nil {
			return fmt.Errorf("encode a report: %w", err)
		}
		raws = append(raws, b)
	}
	return view.ExportDiffHTML(ctx, db, w, raws...)
}
