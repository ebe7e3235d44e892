package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestListen_WarnsBeyondLoopback: listening where other machines can
// connect is allowed, with a warning; loopback addresses are quiet.
func TestListen_WarnsBeyondLoopback(t *testing.T) {
	parallel(t)
	for _, tt := range []struct {
		addr string
		warn bool
	}{
		{"127.0.0.1:0", false},
		{"[::1]:0", false},
		{"localhost:0", false},
		{"0.0.0.0:0", true},
		{":0", true},
	} {
		var stderr bytes.Buffer
		ln, err := listen(&env{stderr: &stderr}, tt.addr)
		if err != nil {
			if strings.Contains(tt.addr, "::1") {
				t.Logf("no IPv6 loopback here: %v", err)
				continue
			}
			t.Fatalf("listen %s: %v", tt.addr, err)
		}
		ln.Close()
		if got := strings.Contains(stderr.String(), "warning: listening on"); got != tt.warn {
			t.Errorf("listen %s: warned = %v, want %v (stderr %q)", tt.addr, got, tt.warn, stderr.String())
		}
	}
}

// TestListen_DefaultIsLoopback: the only default listen address, record's,
// is on 127.0.0.1.
func TestListen_DefaultIsLoopback(t *testing.T) {
	parallel(t)
	app := newApp(&env{})
	found := 0
	for _, c := range app.Commands {
		for _, f := range c.Flags {
			sf, ok := f.(*cli.StringFlag)
			if !ok || sf.Name != "listen" || sf.Value == "" {
				continue
			}
			found++
			if !strings.HasPrefix(sf.Value, "127.0.0.1:") {
				t.Errorf("%s --listen defaults to %q; want a 127.0.0.1 address", c.Name, sf.Value)
			}
		}
	}
	if found == 0 {
		t.Fatal("no command has a default --listen address; this test looks at nothing")
	}
}
