package view

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/store"
)

// WriteSessions writes ss as a table for people, one line per session:
// id, name, transport, revision, era, start (UTC), duration ("open" while
// it has not ended) and upstream; "-" stands for an empty field. Control
// characters in the fields are escaped (see internal/termtext).
func WriteSessions(w io.Writer, ss []store.Session) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tNAME\tTRANSPORT\tREVISION\tERA\tSTARTED\tDURATION\tUPSTREAM")
	dash := func(s string) string {
		if s == "" {
			return "-"
		}
		return termtext.Escape(s)
	}
	for _, s := range ss {
		dur := "open"
		if !s.EndedAt.IsZero() {
			dur = s.EndedAt.Sub(s.StartedAt).Round(time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.ID, dash(s.Name), s.Transport, dash(s.Revision), dash(s.Era.String()),
			s.StartedAt.UTC().Format(time.DateTime), dur, dash(s.Upstream))
	}
	return tw.Flush()
}
