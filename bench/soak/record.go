package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The record soak: mcpvcr record proxies a Go SDK server that keeps SSE
// events for resumption (so every event carries an id), and -clients
// clients run sessions through it for -duration: initialize, initialized,
// a tools/call answered on an SSE stream with -events progress events,
// then DELETE unless -delete=false (the session is then left idle). A
// recorder that keeps each session's state and every event id it saw
// grows between the first sample and the last.

// recordTarget starts the upstream server and mcpvcr record in front of
// it, recording into a cassette in a temporary directory. stop ends both.
func recordTarget(bin string, events int) (cmd *exec.Cmd, url string, stop func(), err error) {
	server := mcp.NewServer(&mcp.Implementation{Name: "soak", Version: "1"}, nil)
	type none struct{}
	mcp.AddTool(server, &mcp.Tool{Name: "tick", Description: "sends progress events, then answers"},
		func(ctx context.Context, req *mcp.CallToolRequest, _ none) (*mcp.CallToolResult, any, error) {
			token := req.Params.GetProgressToken()
			for i := range events {
				if token == nil {
					break
				}
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i + 1), Total: float64(events)}); err != nil {
					return nil, nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server },
		&mcp.StreamableHTTPOptions{EventStore: mcp.NewMemoryEventStore(nil), SessionTimeout: time.Minute})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", nil, err
	}
	up := &http.Server{Handler: h}
	go func() { _ = up.Serve(ln) }()
	dir, err := os.MkdirTemp("", "soak-record-")
	if err != nil {
		_ = up.Close()
		return nil, "", nil, err
	}
	cmd = exec.Command(bin, "record", "--cassette", filepath.Join(dir, "soak.db"),
		"--upstream", "http://"+ln.Addr().String()+"/mcp", "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		_ = up.Close()
		_ = os.RemoveAll(dir)
		return nil, "", nil, err
	}
	stop = func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
		_ = up.Close()
		_ = os.RemoveAll(dir)
	}
	url, err = firstMatch(stderr, recordingAt)
	if err != nil {
		stop()
		return nil, "", nil, err
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	return cmd, url, stop, nil
}

var recordingAt = regexp.MustCompile(`point your client at (http://\S+) `)

// The client frames of a recorded session: the soak sends them as they
// are, so that it needs no client of its own.
var (
	initializeBody  = []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"soak","version":"1"}}}`)
	initializedBody = []byte(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
	tickBody        = []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"tick","arguments":{},"_meta":{"progressToken":"p"}}}`)
)

// recordSession runs one session through the recorder.
func recordSession(c *http.Client, url string, del bool) error {
	sid := ""
	for _, body := range [][]byte{initializeBody, initializedBody, tickBody} {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return fmt.Errorf("POST answered %d", resp.StatusCode)
		}
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			sid = s
		}
	}
	if !del || sid == "" {
		return nil
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// load runs clients loops of one until stop, counting sessions and
// failures.
func load(clients int, stop time.Time, one func() error) (sessions, failures *atomic.Int64, wait func()) {
	sessions, failures = new(atomic.Int64), new(atomic.Int64)
	var wg sync.WaitGroup
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(stop) {
				if err := one(); err != nil {
					failures.Add(1)
					continue
				}
				sessions.Add(1)
			}
		}()
	}
	return sessions, failures, wg.Wait
}
