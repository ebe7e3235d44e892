package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

func showCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "show",
		Usage:     "print the timeline of a session",
		ArgsUsage: "SESSION [CASSETTE]",
		Description: "One line per frame, in fixed-width columns: seq, offset from the session start, direction\n" +
			"(> client to server, < server to client), stream, kind, method (and the tool, prompt or\n" +
			"resource it names; an answer shows what it answers), id, size in bytes, the frame it pairs\n" +
			"with and how long the answer took, and flags (batch, malformed, sse id/event/retry,\n" +
			"rev= for a 2026-07-28 request's revision, oversize=N for a frame longer than record's\n" +
			"--max-frame, stored cut, cancelled-by=#N on a cancelled request, after-cancel=#N on what\n" +
			"the server sent for it after that cancellation). A line where each stream opens (HTTP method,\n" +
			"status, path, content type, Last-Event-ID) and where it ends (complete, server-closed,\n" +
			"client-aborted, upstream-error). A task (revision 2025-11-25) is grouped the same way: a line\n" +
			"where it begins, before the request that created it (task#N, what created it, which side runs\n" +
			"it, its id), and one where it ends, after its last frame (the states it went through, its polls,\n" +
			"status notifications and result); each of its frames is flagged task#N:ROLE (create, created,\n" +
			"poll, status, result, cancel, related). FLAGS are cut at 60 characters (--payload prints a frame whole).\n" +
			"Control, bidi and zero-width characters print as escapes (\\u202e). Colour on a terminal, none\n" +
			"when piped or with NO_COLOR.\n\n" +
			"   mcpvcr show 3 --method tools/call --payload\n" +
			"   mcpvcr show 3 --stream post#4 --dir s2c\n" +
			"   mcpvcr show 3 --task 1\n" +
			"   mcpvcr show 3 --format json",
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "method", Usage: "only frames of `METHOD`: its requests and notifications, and the answers to them"},
			&cli.StringFlag{Name: "stream", Usage: "only `STREAM`: as show names it (post#4), its number (4) or a kind (stderr)"},
			&cli.StringFlag{Name: "dir", Usage: "only one `DIRECTION`: c2s (client to server) or s2c"},
			&cli.StringFlag{Name: "task", Usage: "only the frames of `TASK`: as show names it (task#2), its number (2) or its taskId"},
			&cli.BoolFlag{Name: "payload", Aliases: []string{"v"}, Usage: "print each frame's JSON, pretty-printed, below its row"},
			&cli.StringFlag{Name: "format", Value: "text", Usage: "output `FORMAT`: text or json"},
		},
		Action: func(c *cli.Context) error {
			path, ids, err := positional(c, 1)
			if err != nil {
				return err
			}
			if len(ids) == 0 {
				return usageErr("mcpvcr ls to see the sessions, then mcpvcr show N", "show needs a SESSION number")
			}
			id := ids[0]
			// Colour on a terminal, never with NO_COLOR (https://no-color.org).
			o := view.Options{Method: c.String("method"), Stream: c.String("stream"), Task: c.String("task"), Payload: c.Bool("payload"),
				Color: os.Getenv("NO_COLOR") == "" && view.IsTerminal(e.stdout)}
			switch c.String("dir") {
			case "":
			case "c2s", ">", "client":
				o.Dir = store.ClientToServer
			case "s2c", "<", "server":
				o.Dir = store.ServerToClient
			default:
				return usageErr("--dir c2s or --dir s2c", "--dir %q is not c2s or s2c", c.String("dir"))
			}
			format := c.String("format")
			if format != "text" && format != "json" {
				return usageErr("--format text or --format json", "--format %q is not text or json", format)
			}
			db, err := openPath(c, path)
			if err != nil {
				return err
			}
			defer db.Close()
			rec, err := db.Recording(c.Context, id)
			switch {
			case errors.Is(err, store.ErrNotFound):
				return noSessionErr(cassettePath(c), err)
			case err != nil:
				return failErr(err, "mcpvcr check "+cassettePath(c))
			}
			if format == "json" {
				err = view.WriteJSON(e.stdout, rec, o)
			} else {
				err = view.WriteText(e.stdout, rec, o)
			}
			var noTask *view.NoTaskError
			switch {
			case errors.As(err, &noTask):
				return usageErr(fmt.Sprintf("mcpvcr show %d to see the session's tasks (task#N lines)", id), "%s", noTask.Error())
			case err != nil:
				return failErr(fmt.Errorf("write the timeline: %w", err), "")
			}
			return nil
		},
	}
}
