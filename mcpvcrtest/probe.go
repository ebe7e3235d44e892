package mcpvcrtest

import (
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/probe"
	"github.com/mcpvcr/mcpvcr/replayer"
)

// Probe replays with probes (mcpvcr replay --probe): recorded answers
// changed so that the client meets what its recording never had (a
// -32020 on a call, an empty or a repeated nextCursor, its session
// answered 404), each placed once where the session's revision and
// transport allow it. kinds names them (probe.Kind names such as
// "header-mismatch" or "session-404"); none places every kind. At
// t.Cleanup, t fails for each probe of a MUST whose verdict failed, and
// logs the whole probe report. NewServer only (probes act over HTTP);
// not with Chaos.
func Probe(kinds ...string) Option {
	return optionFunc(func(c *config) {
		ks, err := probe.ParseKinds(strings.Join(kinds, ","))
		c.probes, c.probeErr = ks, err
		if len(kinds) == 0 {
			c.probes = probe.Kinds()
		}
	})
}

// checkProbe fails t when a probe of a MUST failed, with the whole probe
// report; else it logs the report.
func checkProbe(t testing.TB, fn string, srv *replayer.Server) {
	t.Helper()
	h, _ := srv.Hook.(*probe.Hook)
	if h == nil {
		return
	}
	var b strings.Builder
	if !h.Write(&b, "") {
		t.Errorf("mcpvcrtest.%s: the client failed a probe:\n%s", fn, b.String())
		return
	}
	t.Logf("mcpvcrtest.%s: probes:\n%s", fn, b.String())
}
