package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRun_Usage(t *testing.T) {
	tests := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"Help", []string{"-h"}, exitOK, "-transport"},
		{"UnknownTransport", []string{"-transport", "ws"}, exitUsage, `unknown -transport "ws"`},
		{"JSONNeedsHTTP", []string{"-json"}, exitUsage, "need -transport http"},
		{"StatelessOverSSE", []string{"-transport", "sse", "-stateless"}, exitUsage, "need -transport http"},
		{"CrossOriginOverStdio", []string{"-cross-origin"}, exitUsage, "need -transport http"},
		{"UnknownVariant", []string{"-variant", "v3"}, exitUsage, `unknown server variant "v3"`},
		{"UnknownVersion", []string{"-versions", "2025-11-25,1999-01-01"}, exitUsage, `unknown protocol version "1999-01-01"`},
		{"ExtraArgument", []string{"extra"}, exitUsage, "unexpected arguments"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"testserver"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != tt.code {
				t.Errorf("run(%q) = %d; want %d (stderr %q)", tt.args, code, tt.code, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.msg) {
				t.Errorf("run(%q) stderr = %q; want it to contain %q", tt.args, stderr.String(), tt.msg)
			}
			if stdout.Len() > 0 {
				t.Errorf("run(%q) wrote %q to stdout; want nothing", tt.args, stdout.String())
			}
		})
	}
}

// TestRun_Stdio runs the server over pipes with verbose logging and checks
// that the script sees the same as in-process (so stdout carried nothing
// but MCP messages) and that the logs went to stderr.
func TestRun_Stdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	clientR, serverW := io.Pipe()
	serverR, clientW := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"testserver", "-v"}, serverR, serverW, &stderr)
		serverW.Close()
	}()
	got := mcptest.Run(ctx, t, &mcp.IOTransport{Reader: clientR, Writer: clientW}, mcptest.V20250618)
	if code := <-done; code != exitOK {
		t.Errorf("run() = %d; want %d", code, exitOK)
	}

	st, ct := mcp.NewInMemoryTransports()
	ss, err := mcptest.NewServer(mcptest.V1).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	want := mcptest.Run(ctx, t, ct, mcptest.V20250618)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transcript over run() differs from in-process (-in-process +run):\n%s", diff)
	}
	if !strings.Contains(stderr.String(), "server session") {
		t.Errorf("run(-v) stderr = %q; want the SDK's server logs", stderr.String())
	}
}
