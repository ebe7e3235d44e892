package mcptest

import (
	"os/exec"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// want returns the in-process transcript at version, as requested.
func want(tb testing.TB, version string) Transcript {
	tb.Helper()
	return Run(runCtx(tb), tb, inProcess(tb, V1), version)
}

func TestTestserver_Stdio(t *testing.T) {
	bin := BuildServer(t)
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			transport := &mcp.CommandTransport{Command: exec.Command(bin, "-transport", "stdio")}
			got := Run(runCtx(t), t, transport, v)
			if diff := cmp.Diff(want(t, v), got); diff != "" {
				t.Errorf("transcript over stdio differs from in-process (-in-process +stdio):\n%s", diff)
			}
		})
	}
}

func TestTestserver_HTTP(t *testing.T) {
	tests := []struct {
		name string
		args []string
	}{
		{"SSEStream", nil},
		{"JSON", []string{"-json"}},
		{"EventStore", []string{"-eventstore"}},
		{"Stateless", []string{"-stateless"}},
	}
	for _, tt := range tests {
		for _, v := range Versions {
			t.Run(tt.name+"/"+v, func(t *testing.T) {
				t.Parallel()
				url := StartServer(t, append([]string{"-transport", "http"}, tt.args...)...)
				got := Run(runCtx(t), t, &mcp.StreamableClientTransport{Endpoint: url}, v)
				if tt.name == "Stateless" && !Modern(v) {
					checkStatelessLegacy(t, got, Run(runCtx(t), t, &mcp.StreamableClientTransport{Endpoint: url}, v))
					return
				}
				// Stateful HTTP serves 2026-07-28 only when stateless: the
				// client falls back to 2025-11-25.
				w := want(t, got.Negotiated)
				w.Requested = v
				if diff := cmp.Diff(w, got); diff != "" {
					t.Errorf("transcript over HTTP %v differs from in-process (-in-process +http):\n%s", tt.args, diff)
				}
			})
		}
	}
}

// checkStatelessLegacy checks two runs against a stateless server at a
// legacy version. Such a server cannot send requests to the client, keeps no
// log level (every request runs at "info") and cannot see a cancellation,
// so its transcript differs from the in-process one, but it is still
// deterministic.
func checkStatelessLegacy(t *testing.T, first, second Transcript) {
	t.Helper()
	if diff := cmp.Diff(first, second); diff != "" {
		t.Errorf("stateless transcript differs between two runs (-first +second):\n%s", diff)
	}
	for _, name := range []string{"tools/call sample", "tools/call roots"} {
		if s, _ := first.Step(name); s.Error == nil {
			t.Errorf("step %q = %+v, want an error: stateless servers cannot send requests", name, s)
		}
	}
	if s, _ := first.Step("tools/call log"); len(s.Notifications) != len(LogLevels) {
		t.Errorf("step tools/call log got %d notifications, want %d: level info drops debug, progress \"logged\" is added", len(s.Notifications), len(LogLevels))
	}
}

func TestTestserver_SSE(t *testing.T) {
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			url := StartServer(t, "-transport", "sse")
			got := Run(runCtx(t), t, &mcp.SSEClientTransport{Endpoint: url}, v)
			w := want(t, got.Negotiated)
			w.Requested = v
			if diff := cmp.Diff(w, got); diff != "" {
				t.Errorf("transcript over HTTP+SSE differs from in-process (-in-process +sse):\n%s", diff)
			}
		})
	}
}
