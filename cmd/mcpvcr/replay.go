package main

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/graceful"
	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/args"
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
			"closest recorded frame (of any candidate session), and replay exits 1 with a summary on\n" +
			"stderr. Over HTTP a request of a shape nothing recorded (a GET without Mcp-Session-Id, say)\n" +
			"gets a 4xx at once naming the closest recorded request: an invented answer, also exit 1.\n" +
			"Without SESSION, each client is matched to the recorded session its frames reproduce.\n\n" +
			"   mcpvcr replay 3 --stdio               # your client's server command\n" +
			"   mcpvcr replay --cassette cassettes/everything-stdio.jsonl --stdio",
		Flags: append([]cli.Flag{
			cassetteFlag(),
			&cli.BoolFlag{Name: "stdio", Usage: "serve on stdin and stdout"},
			&cli.StringFlag{Name: "listen", Usage: "serve HTTP (Streamable HTTP or HTTP+SSE, as recorded) on `ADDR`, such as 127.0.0.1:8080", EnvVars: []string{"MCPVCR_LISTEN"}},
			&cli.StringSliceFlag{Name: "cut", Usage: "HTTP fault: cut SSE stream N after E events, as `N:E` (N as mcpvcr show numbers streams; repeatable)"},
			&cli.IntFlag{Name: "expire-after", Usage: "HTTP fault: answer 404 (session expired) after `N` requests of a session"},
			&cli.BoolFlag{Name: "strict", EnvVars: []string{"MCPVCR_STRICT"}, Usage: "also check the client's side of the protocol: over HTTP its headers (MCP-Protocol-Version, Mcp-Session-Id, Accept) as the negotiated revision requires; on every transport, no cancelled initialize"},
			&cli.DurationFlag{Name: "delay", Usage: "HTTP fault: wait `D` before every event and answer"},
			&cli.StringFlag{Name: "pace", Value: "fast", Usage: "`fast` (as soon as due), real (recorded timing), or a factor such as 0.5", EnvVars: []string{"MCPVCR_PACE"}},
			&cli.StringFlag{Name: "match", Value: "tolerant", EnvVars: []string{"MCPVCR_MATCH"}, Usage: "`tolerant` (clientInfo ignored, absent params = {}, numbers by value, keys in any order) or exact (the recorded JSON values)"},
			&cli.StringSliceFlag{Name: "ignore", Usage: "also ignore `PATH` when matching client frames, such as 'initialize:params.capabilities' (repeatable; " + "the path syntax of verify --ignore, from the client message: params.…)"},
			&cli.BoolFlag{Name: "verbose", Aliases: []string{"v"}, Usage: "HTTP: also write one summary line per client session served"},
			&cli.BoolFlag{Name: "trace", Usage: "stdio: write to stderr a line per recorded server frame sent, with the client frame that released it"},
			&cli.DurationFlag{Name: "idle-timeout", Value: graceful.DefaultIdleTimeout, EnvVars: []string{"MCPVCR_IDLE_TIMEOUT"}, Usage: "HTTP: close a keep-alive connection after `D` without a request (headers must arrive within 10s, a request body within 30s; answers are never cut)"},
			&cli.DurationFlag{Name: "wait", Value: replayer.DefaultWait, EnvVars: []string{"MCPVCR_WAIT"}, Usage: "answer a request with -32019 after `D` when the recording answers it only after client frames this client has not sent (over HTTP+SSE, send a ready answer recorded behind one that waits so out of order) (0: wait for good)"},
		}, append(chaosFlags(), probeFlags()...)...),
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
			probes, err := parseProbe(c)
			if err != nil {
				return err
			}
			chaos, err := parseChaos(c)
			if err != nil {
				return err
			}
			srv, _, err := replayServer(c, e, db, store.Stdio)
			if err != nil {
				return err
			}
			srv.Pace, srv.Strict = pace, c.Bool("strict")
			plugChaos(srv, chaos)
			plugProbe(srv, probes)
			announceChaos(c, e, chaos)
			announceProbe(e, probes)
			rep, err := srv.ServeStdio(c.Context, e.client())
			if err != nil {
				return failErr(fmt.Errorf("replay: %w", err), "")
			}
			rep.WriteSummary(e.stderr)
			ok := writeChaos(srv, e.stderr, chaosCommand(c, ""))
			ok = writeProbe(srv, e.stderr, chaosCommand(c, "")) && ok
			if err := writeChaosReport(c, e, db, srv, chaosCommand(c, "")); err != nil {
				return err
			}
			if !rep.OK() || !ok {
				return errDiffer
			}
			return nil
		},
	}
}

// matchRules reads --match and --ignore, and the rules stored with the
// sessions replayed (label match-ignore, one path per line).
func matchRules(c *cli.Context, db *store.DB, ids []int64) (replayer.Match, error) {
	var mt replayer.Match
	switch c.String("match") {
	case "", "tolerant":
	case "exact":
		mt.Exact = true
	default:
		return mt, usageErr("--match tolerant or --match exact", "--match %q is not tolerant or exact", c.String("match"))
	}
	mt, err := replayer.StoredMatch(c.Context, mt, c.StringSlice("ignore"), replayer.Sessions{DB: db, IDs: ids})
	if errors.Is(err, diff.ErrBadPath) {
		return mt, usageErr("--ignore 'tools/call:params.arguments.when' (see mcpvcr help verify for the path syntax)", "--ignore: %w", err)
	}
	if err != nil {
		return mt, failErr(err, "")
	}
	return mt, nil
}

// waitFlag reads --wait: 0 on the command line waits for good.
func waitFlag(c *cli.Context) time.Duration {
	if d := c.Duration("wait"); d > 0 {
		return d
	}
	return -1
}

func parsePace(s string) (float64, error) {
	f, err := args.ParsePace(s)
	if err != nil {
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
	return sessionNumber(a)
}

// sessionNumber parses a SESSION argument.
func sessionNumber(a string) (int64, error) {
	id, err := strconv.ParseInt(a, 10, 64)
	if err != nil || id <= 0 {
		return 0, usageErr("mcpvcr ls to see the sessions and their numbers", "%q is not a session number", a)
	}
	return id, nil
}

// replayServer selects the SESSION argument's session (or every session
// of the transports), reads the matching rules and loads the sessions
// into a Server.
func replayServer(c *cli.Context, e *env, db *store.DB, ts ...store.Transport) (*replayer.Server, []int64, error) {
	id, err := sessionArg(c, 0)
	if err != nil {
		return nil, nil, err
	}
	ids, err := args.Select(c.Context, db, id, ts...)
	if err != nil {
		return nil, nil, replayErr(c, err)
	}
	mt, err := matchRules(c, db, ids)
	if err != nil {
		return nil, nil, err
	}
	for _, r := range mt.IdentityRules() {
		e.logger.Warn("--ignore " + r + " ignores what a request asks for (its method, or the tool, prompt or resource it names): replay may answer a request with another's answer")
	}
	srv := &replayer.Server{Logger: e.logger, Match: mt, Wait: waitFlag(c)}
	if c.Bool("trace") {
		srv.Trace = e.stderr
	}
	if err := srv.Load(c.Context, db, ids); err != nil {
		return nil, nil, failErr(err, "")
	}
	return srv, ids, nil
}

func a(id int64) string { return strconv.FormatInt(id, 10) }
