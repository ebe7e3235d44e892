package main

import (
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
	"github.com/mcpvcr/mcpvcr/store"
)

func showCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print the timeline of a session",
		ArgsUsage: "SESSION [CASSETTE]",
		Description: "One line per frame: offset from the session start, direction (> client to server,\n" +
			"< server to client), stream, JSON-RPC kind, method, id, size in bytes and flags\n" +
			"(batch, malformed, sse id/event/retry, comment, rev= for a 2026-07-28 request's revision).\n" +
			"Stream opens (with HTTP method, URL, status, Last-Event-ID) and how each stream ended are shown too.",
		Flags: []cli.Flag{cassetteFlag()},
		Action: func(c *cli.Context) error {
			path, ids, err := positional(c, 1)
			if err != nil {
				return err
			}
			if len(ids) == 0 {
				return usageErr("mcpvcr ls to see the sessions, then mcpvcr show N", "show needs a SESSION number")
			}
			id := ids[0]
			db, err := openPath(c, path)
			if err != nil {
				return err
			}
			defer db.Close()
			rec, err := db.Recording(c.Context, id)
			if err != nil {
				return failErr(err, "mcpvcr ls --cassette "+cassettePath(c)+" to see the sessions")
			}
			writeTimeline(e, rec.Session, rec.Streams, rec.Frames)
			return nil
		},
	}
}

func writeTimeline(e *env, s store.Session, streams []store.Stream, frames []store.Frame) {
	fmt.Fprintf(e.stdout, "session %d %s  transport=%s revision=%s era=%s upstream=%s\n", s.ID, s.Name, s.Transport, dash(s.Revision), dash(s.Era.String()), dash(s.Upstream))
	label := map[int64]string{}
	kinds := map[int64]store.StreamKind{}
	for i, st := range streams {
		kinds[st.ID] = st.Kind
		label[st.ID] = fmt.Sprintf("%s#%d", st.Kind, i+1)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 1, ' ', 0)
	fmt.Fprintln(tw, "OFFSET\tDIR\tSTREAM\tKIND\tMETHOD\tID\tSIZE\tFLAGS")
	si := 0
	for _, f := range frames {
		for si < len(streams) && streams[si].Opened <= f.Offset {
			writeStreamLine(tw, streams[si], label)
			si++
		}
		dir := ">"
		if f.Direction == store.ServerToClient {
			dir = "<"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", fmtOffset(f.Offset), dir, label[f.StreamID], f.Kind, dash(f.Method), dash(f.ID), len(f.Raw), flags(f, kinds[f.StreamID]))
	}
	for ; si < len(streams); si++ {
		writeStreamLine(tw, streams[si], label)
	}
	tw.Flush()
	fmt.Fprintln(e.stdout, "stream ends:")
	for _, st := range streams {
		line := fmt.Sprintf("  %s %s at %s", label[st.ID], st.End, fmtOffset(st.Closed))
		if st.Err != "" {
			line += ": " + st.Err
		}
		fmt.Fprintln(e.stdout, line)
	}
}

func writeStreamLine(tw *tabwriter.Writer, st store.Stream, label map[int64]string) {
	what := "open"
	if st.URL != "" {
		what = fmt.Sprintf("%s %s -> %d", st.Method, st.URL, st.Status)
	}
	if st.LastEventID != "" {
		what += " Last-Event-ID=" + st.LastEventID
	}
	fmt.Fprintf(tw, "%s\t=\t%s\t%s\t\t\t\t\n", fmtOffset(st.Opened), label[st.ID], what)
}

func fmtOffset(d interface{ Seconds() float64 }) string {
	return fmt.Sprintf("%9.3fs", d.Seconds())
}

func flags(f store.Frame, kind store.StreamKind) string {
	var fl []string
	if f.Batch {
		fl = append(fl, fmt.Sprintf("batch(%d)", len(f.Members)))
	}
	if f.Kind == store.KindRequest {
		if v := mcpwire.RequestMeta(jsonrpc.Parse(f.Data).Params).ProtocolVersion; v != "" {
			fl = append(fl, "rev="+v) // a modern request names its revision
		}
	}
	if f.Malformed {
		fl = append(fl, "malformed")
	}
	if f.Comment {
		fl = append(fl, "comment")
	}
	if f.HasEventID {
		fl = append(fl, "sse-id="+f.EventID)
	}
	if f.Event != "" {
		fl = append(fl, "event="+f.Event)
	}
	if f.Retry >= 0 && f.SSE {
		fl = append(fl, fmt.Sprintf("retry=%d", f.Retry))
	}
	if len(f.Raw) > 0 && f.Raw[len(f.Raw)-1] != '\n' && (kind == store.StdinStream || kind == store.StdoutStream) {
		fl = append(fl, "no-newline")
	}
	return strings.Join(fl, ",")
}
