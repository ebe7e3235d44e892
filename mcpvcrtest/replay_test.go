package mcpvcrtest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
)

// script does what run 1 or run 3 of the recordings did: list the tools,
// then echo "run 1" (run 1) or add 40 and 2 (run 3). It returns what the
// client saw, one line per step.
func script(ctx context.Context, t testing.TB, tr mcp.Transport, version string, run int) []string {
	t.Helper()
	cs, err := newClient().Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	got := []string{"tools: " + strings.Join(names, ",")}
	call := &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "run 1"}}
	if run == 3 {
		call = &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}}
	}
	res, err := cs.CallTool(ctx, call)
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	return append(got, fmt.Sprintf("%s: %s", call.Name, res.Content[0].(*mcp.TextContent).Text))
}

// want is what the live runs saw.
var want = map[int][]string{
	1: {"tools: add,echo,elicit,fail,info,log,progress,reconnect,roots,sample,slow", "echo: run 1"},
	3: {"tools: add,echo,elicit,fail,info,log,progress,reconnect,roots,sample,slow", `add: {"sum":42}`},
}

func TestReplay(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		version string
		tr      func(t *testing.T) mcp.Transport
	}{
		{"NewServerJSON", "2025-11-25", func(t *testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(mcpvcrtest.NewServer(t, httpJSONCassette))}
		}},
		{"NewServerSSE", "2025-11-25", func(t *testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(mcpvcrtest.NewServer(t, httpSSECassette))}
		}},
		{"NewServer20260728", "2026-07-28", func(t *testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(mcpvcrtest.NewServer(t, modernCassette))}
		}},
		{"NewServerHTTPSSE", "2024-11-05", func(t *testing.T) mcp.Transport {
			return &mcp.SSEClientTransport{Endpoint: mcpvcrtest.Endpoint(mcpvcrtest.NewServer(t, legacySSECassette))}
		}},
		{"TransportHTTPSSE", "2024-11-05", func(t *testing.T) mcp.Transport { return mcpvcrtest.Transport(t, legacySSECassette) }},
		{"TransportStdio20260728", "2026-07-28", func(t *testing.T) mcp.Transport { return mcpvcrtest.Transport(t, modernStdioCassette) }},
		{"TransportStdio", "2025-11-25", func(t *testing.T) mcp.Transport { return mcpvcrtest.Transport(t, stdioCassette) }},
		{"TransportHTTP", "2025-11-25", func(t *testing.T) mcp.Transport { return mcpvcrtest.Transport(t, httpSSECassette) }},
		{"Transport20260728", "2026-07-28", func(t *testing.T) mcp.Transport { return mcpvcrtest.Transport(t, modernCassette) }},
		{"Command", "2025-11-25", func(t *testing.T) mcp.Transport {
			return &mcp.CommandTransport{Command: mcpvcrtest.Command(t, stdioCassette)}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := tt.tr(t)
			// Two clients of one replay, each singling out its run of
			// eight by what it calls after the shared opening.
			for _, run := range []int{3, 1} {
				if _, ok := tr.(*mcp.CommandTransport); ok && run == 1 {
					tr = tt.tr(t) // a command starts once
				}
				if diff := cmp.Diff(want[run], script(ctx, t, tr, tt.version, run)); diff != "" {
					t.Errorf("run %d mismatch (-want +got):\n%s", run, diff)
				}
			}
		})
	}
}

// TestReplay_Everything replays recordings of
// @modelcontextprotocol/server-everything (eight runs each, over stdio and
// Streamable HTTP with SSE answers): run 1 echoes "run 1".
func TestReplay_Everything(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name string
		tr   func(t *testing.T) mcp.Transport
	}{
		{"TransportStdio", func(t *testing.T) mcp.Transport {
			return mcpvcrtest.Transport(t, "../cassettes/multi-everything-stdio.jsonl")
		}},
		{"NewServerHTTP", func(t *testing.T) mcp.Transport {
			return &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(mcpvcrtest.NewServer(t, "../cassettes/multi-everything-http-sse.jsonl"))}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs := connect(ctx, t, tt.tr(t), "2025-11-25")
			defer cs.Close()
			listTools(ctx, t, cs)
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "run 1"}})
			if err != nil {
				t.Fatalf("CallTool: %v", err)
			}
			if got, want := res.Content[0].(*mcp.TextContent).Text, "Echo: run 1"; got != want {
				t.Errorf("echo = %q; want %q", got, want)
			}
		})
	}
}
