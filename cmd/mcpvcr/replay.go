package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

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
			&cli.StringFlag{Name: "listen", Usage: "serve HTTP (Streamable HTTP or HTTP+SSE, as recorded) on `ADDR`, such as 127.0.0.1:8080"},
			&cli.StringSliceFlag{Name: "cut", Usage: "HTTP fault: cut SSE stream N after E events, as `N:E` (N as mcpvcr show numbers streams; repeatable)"},
			&cli.IntFlag{Name: "expire-after", Usage: "HTTP fault: answer 404 (session expired) after `N` requests of a session"},
			&cli.BoolFlag{Name: "strict", Usage: "HTTP: also check the client's headers (MCP-Protocol-Version, Mcp-Session-Id, Accept) as the negotiated revision requires"},
			&cli.DurationFlag{Name: "delay", Usage: "HTTP fault: wait `D` before every event and answer"},
			&cli.StringFlag{Name: "pace", Value: "fast", Usage: "`fast` (as soon as due), real (recorded timing), or a factor such as 0.5"},
			&cli.StringFlag{Name: "match", Value: "tolerant", EnvVars: []string{"MCPVCR_MATCH"}, Usage: "`tolerant` (clientInfo ignored, absent params = {}, numbers by value, keys in any order) or exact (the recorded JSON values)"},
			&cli.StringSliceFlag{Name: "ignore", Usage: "also ignore `PATH` when matching client frames, such as 'initialize:params.capabilities' (repeatable; " + "the path syntax of verify --ignore, from the client message: params.…)"},
			&cli.DurationFlag{Name: "wait", Value: replayer.DefaultWait, EnvVars: []string{"MCPVCR_WAIT"}, Usage: "answer a request with -32019 after `D` when the recording answers it only after client frames this client has not sent (0: wait for good)"},
		},
		Action: func(c *cli.Context) error {
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
			sel, err := sessionArg(c, 0)
			if err != nil {
				return err
			}
			var sids []int64
			if sel == 0 {
				// Every stdio session: only their ids are read here.
				if sids, err = db.SessionIDs(c.Context, store.Stdio); err != nil {
					return failErr(err, "")
				}
			}
			if len(sids) == 0 {
				ss, err := replaySessions(c, db, store.Stdio)
				if err != nil {
					return err
				}
				sids = ids(ss)
			}
			mt, err := matchRules(c, db, sids)
			if err != nil {
				return err
			}
			srv := &replayer.Server{Pace: pace, Logger: e.logger, Match: mt, Wait: waitFlag(c)}
			if len(sids) > 1 {
				// Many sessions: through the replay index, loading only the
				// candidates in play.
				if srv.Source, err = replayer.NewSource(c.Context, db, e.logger, sids...); err != nil {
					return failErr(err, "")
				}
			} else if srv.Recordings, err = replayer.Load(c.Context, db, sids...); err != nil {
				return failErr(err, "")
			}
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

// matchRules reads --match and --ignore, and the rules stored with the
// sessions replayed (label match-ignore, one path per line).
func matchRules(c *cli.Context, db *store.DB, sids []int64) (replayer.Match, error) {
	var mt replayer.Match
	switch c.String("match") {
	case "", "tolerant":
	case "exact":
		mt.Exact = true
	default:
		return mt, usageErr("--match tolerant or --match exact", "--match %q is not tolerant or exact", c.String("match"))
	}
	paths := c.StringSlice("ignore")
	stored, err := db.LabelValues(c.Context, replayer.MatchIgnoreLabel, sids...)
	if err != nil {
		return mt, failErr(err, "")
	}
	for _, v := range stored {
		for _, p := range strings.Split(v, "\n") {
			if p = strings.TrimSpace(p); p != "" && !slices.Contains(paths, p) {
				paths = append(paths, p)
			}
		}
	}
	for _, p := range paths {
		path, err := replayer.ParsePath(p)
		if err != nil {
			return mt, usageErr("--ignore 'tools/call:params.arguments.when' (see mcpvcr help verify for the path syntax)", "--ignore %q: %v", p, err)
		}
		mt.Ignore = append(mt.Ignore, ignoreRule{path})
	}
	return mt, nil
}

// ignoreRule is a --ignore path as a replay matching rule.
type ignoreRule struct{ p replayer.Path }

func (r ignoreRule) Apply(msg map[string]any) { r.p.Strip(msg) }
func (r ignoreRule) String() string           { return r.p.String() }

// waitFlag reads --wait: 0 on the command line waits for good.
func waitFlag(c *cli.Context) time.Duration {
	if d := c.Duration("wait"); d > 0 {
		return d
	}
	return -1
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

// replaySessions returns the SESSION argument's session, or every
// session of the transports when none is given.
func replaySessions(c *cli.Context, db *store.DB, ts ...store.Transport) ([]store.Session, error) {
	id, err := sessionArg(c, 0)
	if err != nil {
		return nil, err
	}
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
		return []store.Session{s}, nil
	}
	all, err := db.Sessions(c.Context)
	if err != nil {
		return nil, failErr(fmt.Errorf("list sessions: %w", err), "")
	}
	var ss []store.Session
	var kinds []string
	for _, s := range all {
		if slices.Contains(ts, s.Transport) {
			ss = append(ss, s)
		}
		kinds = append(kinds, s.Transport.String())
	}
	if len(ss) == 0 {
		have := "it is empty"
		if len(kinds) > 0 {
			have = "it holds " + strings.Join(kinds, ", ") + " sessions"
		}
		return nil, failErr(fmt.Errorf("cassette %s has no %s sessions: %s", cassettePath(c), ts[0], have), "record one with mcpvcr record, or name another --cassette")
	}
	return ss, nil
}

func ids(ss []store.Session) []int64 {
	out := make([]int64, len(ss))
	for i, s := range ss {
		out[i] = s.ID
	}
	return out
}

// loadSessions loads sessions ss for replay.
func loadSessions(c *cli.Context, db *store.DB, ss []store.Session) ([]*replayer.Recording, error) {
	recs, err := replayer.Load(c.Context, db, ids(ss)...)
	if err != nil {
		return nil, failErr(err, "")
	}
	return recs, nil
}

func a(id int64) string { return strconv.FormatInt(id, 10) }
