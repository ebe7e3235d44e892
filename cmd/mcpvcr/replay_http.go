package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

func replayHTTP(c *cli.Context, e *env, db *store.DB, pace float64) error {
	faults, err := parseFaults(c)
	if err != nil {
		return err
	}
	ss, err := replaySessions(c, db, store.StreamableHTTP, store.LegacySSE)
	if err != nil {
		return err
	}
	recs, err := loadSessions(c, db, ss)
	if err != nil {
		return err
	}
	ln, err := listen(e, c.String("listen"))
	if err != nil {
		return err
	}
	mt, err := matchRules(c, db, ids(ss))
	if err != nil {
		return err
	}
	srv := &replayer.Server{Recordings: recs, Pace: pace, Logger: e.logger, Faults: faults, Strict: c.Bool("strict"), Match: mt, Wait: waitFlag(c)}
	fmt.Fprintf(e.stderr, "mcpvcr: replaying %d session(s) on http://%s; stop with Ctrl-C\n", len(recs), ln.Addr())
	if err := serve(c.Context, ln, srv, srv.Close); err != nil {
		return failErr(fmt.Errorf("serve: %w", err), "")
	}
	ok := true
	for _, rep := range srv.Reports() {
		rep.WriteSummary(e.stderr)
		ok = ok && rep.OK()
	}
	if !ok {
		return errDiffer
	}
	return nil
}

func parseFaults(c *cli.Context) (replayer.Faults, error) {
	f := replayer.Faults{ExpireAfter: c.Int("expire-after"), Delay: c.Duration("delay")}
	for _, spec := range c.StringSlice("cut") {
		n, ev, ok := strings.Cut(spec, ":")
		sn, err1 := strconv.Atoi(n)
		en, err2 := strconv.Atoi(ev)
		if !ok || err1 != nil || err2 != nil || sn <= 0 || en <= 0 {
			return f, usageErr("--cut 3:2 cuts stream 3 (see mcpvcr show) after 2 events", "--cut %q is not STREAM:EVENTS", spec)
		}
		if f.CutAfter == nil {
			f.CutAfter = map[int]int{}
		}
		f.CutAfter[sn] = en
	}
	return f, nil
}
