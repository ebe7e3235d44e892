package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

func replayCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "be the recorded server for a client under test",
		ArgsUsage: "[SESSION]",
		Description: "Replays a recorded session as the server, offline. Client frames are matched to the\n" +
			"recording (ids, progress tokens and volatile _meta values aside); the recorded answers go\n" +
			"back with the client's ids. A frame that matches nothing gets a JSON-RPC error naming the\n" +
			"closest recorded frame, and replay exits 1 with a summary on stderr.\n" +
			"Without SESSION, each client is matched to the recorded session its frames reproduce.\n\n" +
			"   mcpvcr replay 3 --stdio               # your client's server command\n" +
			"   mcpvcr replay --cassette cassettes/everything-stdio.jsonl --stdio",
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.BoolFlag{Name: "stdio", Usage: "serve on stdin and stdout"},
			&cli.StringFlag{Name: "listen", Usage: "serve HTTP (Streamable HTTP or HTTP+SSE, as recorded) on `ADDR`, such as 127.0.0.1:8080", EnvVars: []string{"MCPVCR_LISTEN"}},
			&cli.StringSliceFlag{Name: "cut", Usage: "HTTP fault: cut SSE stream N after E events, as `N:E` (N as mcpvcr show numbers streams; repeatable)"},
			&cli.IntFlag{Name: "expire-after", Usage: "HTTP fault: answer 404 (session expired) after `N` requests of a session"},
			&cli.BoolFlag{Name: "strict", EnvVars: []string{"MCPVCR_STRICT"}, Usage: "HTTP: also check the client's headers (MCP-Protocol-Version, Mcp-Session-Id, Accept) as the negotiated revision requires"},
			&cli.DurationFlag{Name: "delay", Usage: "HTTP fault: wait `D` before every event and answer"},
			&cli.StringFlag{Name: "pace", Value: "fast", Usage: "`fast` (as soon as due), real (recorded timing), or a factor such as 0.5", EnvVars: []string{"MCPVCR_PACE"}},
		},
		Action: func(c *cli.Context) error {
			if err := noArgs(c, 1); err != nil {
				return err
			}
			if c.Bool("stdio") == (c.String("listen") != "") {
				return usageErr("mcpvcr replay [SESSION] --stdio, or mcpvcr replay [SESSION] --listen 127.0.0.1:8080", "replay needs one of --stdio or --listen")
			}
			pace, err := parsePace(c.String("pace"))
			if err != nil {
				return err
			}
			db, err := openForRead(c)
			if err != nil {
				return err
			}
			defer db.Close()
			if c.String("listen") != "" {
				return replayHTTP(c, e, db, pace)
			}
			recs, err := loadRecordings(c, db, store.Stdio)
			if err != nil {
				return err
			}
			srv := &replayer.Server{Recordings: recs, Pace: pace, Logger: e.logger}
			client := struct {
				io.Reader
				io.Writer
			}{e.stdin, e.stdout}
			rep, err := srv.ServeStdio(c.Context, client)
			if err != nil {
				return failErr(fmt.Errorf("replay: %w", err), "")
			}
			rep.WriteSummary(e.stderr)
			if !rep.OK() {
				return errDiffer
			}
			return nil
		},
	}
}

func parsePace(s string) (float64, error) {
	switch s {
	case "", "fast":
		return 0, nil
	case "real":
		return 1, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 {
		return 0, usageErr("--pace fast, --pace real or --pace 2", "--pace %q is not fast, real or a factor", s)
	}
	return f, nil
}

// sessionArg parses the SESSION argument at position i, 0 if absent.
func sessionArg(c *cli.Context, i int) (int64, error) {
	a := c.Args().Get(i)
	if a == "" {
		return 0, nil
	}
	id, err := strconv.ParseInt(a, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErr("mcpvcr ls to see the sessions and their numbers", "%q is not a session number", a)
	}
	return id, nil
}

// loadRecordings loads the SESSION argument, or every session of the
// transport when none is given.
func loadRecordings(c *cli.Context, db *store.DB, ts ...store.Transport) ([]*store.Recording, error) {
	id, err := sessionArg(c, 0)
	if err != nil {
		return nil, err
	}
	var ids []int64
	if id != 0 {
		s, err := db.Session(c.Context, id)
		if err != nil {
			return nil, failErr(fmt.Errorf("session %d: %w", id, err), "mcpvcr ls --cassette "+cassettePath(c)+" to see the sessions")
		}
		if !slices.Contains(ts, s.Transport) {
			hint := "mcpvcr replay " + a(id) + " --listen 127.0.0.1:8080"
			if s.Transport == store.Stdio {
				hint = "mcpvcr replay " + a(id) + " --stdio"
			}
			return nil, failErr(fmt.Errorf("session %d was recorded over %s", id, s.Transport), hint)
		}
		ids = []int64{id}
	} else {
		all, err := db.Sessions(c.Context)
		if err != nil {
			return nil, failErr(fmt.Errorf("list sessions: %w", err), "")
		}
		var kinds []string
		for _, s := range all {
			if slices.Contains(ts, s.Transport) {
				ids = append(ids, s.ID)
			}
			kinds = append(kinds, s.Transport.String())
		}
		if len(ids) == 0 {
			have := "it is empty"
			if len(kinds) > 0 {
				have = "it holds " + strings.Join(kinds, ", ") + " sessions"
			}
			return nil, failErr(fmt.Errorf("cassette %s has no %s sessions: %s", cassettePath(c), ts[0], have), "record one with mcpvcr record, or name another --cassette")
		}
	}
	recs, err := db.Recordings(c.Context, ids...)
	if err != nil {
		return nil, failErr(err, "")
	}
	return recs, nil
}

func a(id int64) string { return strconv.FormatInt(id, 10) }
