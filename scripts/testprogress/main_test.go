package main

import (
	"strings"
	"testing"
	"time"
)

func TestProgress(t *testing.T) {
	var out strings.Builder
	p := &progress{pkgs: map[string]*pkgState{}, out: &out}
	t0 := time.Unix(0, 0)
	lines := `{"Action":"start","Package":"github.com/mcpvcr/mcpvcr/store"}
{"Action":"run","Package":"github.com/mcpvcr/mcpvcr/store","Test":"TestSlow"}
{"Action":"run","Package":"github.com/mcpvcr/mcpvcr/store","Test":"TestBad"}
{"Action":"output","Package":"github.com/mcpvcr/mcpvcr/store","Test":"TestBad","Output":"    bad_test.go:9: the frame is lost\n"}
{"Action":"fail","Package":"github.com/mcpvcr/mcpvcr/store","Test":"TestBad","Elapsed":0.5}`
	p.read(strings.NewReader(lines))
	p.report(t0.Add(time.Hour)) // nothing started at t0: nothing to say
	if strings.Contains(out.String(), "running") {
		t.Errorf("a package started now is reported as long-running:\n%s", out.String())
	}
	p.pkgs["github.com/mcpvcr/mcpvcr/store"].started = time.Now().Add(-time.Minute)
	p.report(time.Now())
	p.read(strings.NewReader(`{"Action":"pass","Package":"github.com/mcpvcr/mcpvcr/store","Test":"TestSlow","Elapsed":31}
{"Action":"fail","Package":"github.com/mcpvcr/mcpvcr/store","Elapsed":32}`))
	for _, want := range []string{
		"--- FAIL store TestBad (0.5s)\n        bad_test.go:9: the frame is lost\n",
		"... store, 1m0s in: 0 tests passed; running TestSlow",
		"store TestSlow pass (31s)",
		"FAIL  store  32.0s  (1 tests passed, 1 failed)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
