package mcptest

import (
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// checkEverything lists the reference server's tools and calls its echo.
func checkEverything(t *testing.T, transport mcp.Transport) {
	t.Helper()
	ctx := runCtx(t)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: ClientName, Version: ClientVersion}, nil).Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("ListTools() error = %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "echo") {
		t.Fatalf("ListTools() = %q, want a tool echo", names)
	}
	call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hi"}})
	if err != nil {
		t.Fatalf("CallTool(echo) error = %v", err)
	}
	if got, want := joinText(call.Content...), "Echo: hi"; got != want {
		t.Errorf("CallTool(echo) = %q; want %q", got, want)
	}
}

func TestEverything(t *testing.T) {
	argv := Everything(t)
	// The reference server does not exit when its stdin closes: a short
	// TerminateDuration makes Close send SIGTERM without the default 5s wait.
	checkEverything(t, &mcp.CommandTransport{
		Command:           exec.Command(argv[0], argv[1:]...),
		TerminateDuration: 100 * time.Millisecond,
	})
}

func TestEverythingHTTP(t *testing.T) {
	tests := []struct {
		mode      string
		transport func(url string) mcp.Transport
	}{
		{StreamableHTTP, func(url string) mcp.Transport { return &mcp.StreamableClientTransport{Endpoint: url} }},
		{SSE, func(url string) mcp.Transport { return &mcp.SSEClientTransport{Endpoint: url} }},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Parallel()
			checkEverything(t, tt.transport(EverythingHTTP(t, tt.mode)))
		})
	}
}
