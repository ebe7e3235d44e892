package view_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	govcr2 "gopkg.in/dnaeon/go-vcr.v2/recorder"
	vcrcassette "gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"
	govcr4 "gopkg.in/dnaeon/go-vcr.v4/pkg/recorder"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/view"
)

// goVCRScript is what the client does live and again against go-vcr.
func goVCRScript(ctx context.Context, t *testing.T, c *mcp.Client, tr mcp.Transport, version string) []string {
	t.Helper()
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	var out []string
	step := func(name string, v any, err error) {
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := json.Marshal(v)
		out = append(out, fmt.Sprintf("%s: %s", name, b))
	}
	tools, err := cs.ListTools(ctx, nil)
	step("tools/list", tools, err)
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}})
	step("add", res, err)
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello go-vcr"}})
	step("echo", res, err)
	rr, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcptest.StaticURI})
	step("resources/read", rr, err)
	if err := cs.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return out
}

// TestWriteGoVCR_V4Replays records the Go SDK client and server through
// mcpvcr, exports the session in both go-vcr formats, and replays each
// with the matching go-vcr recorder in replay mode to the Go SDK client:
// go-vcr v4 (format 2) with its default matcher, which compares methods,
// URLs, headers, bodies, hosts and content lengths, and go-vcr v2 (format
// 1). The client must see exactly what it saw live.
func TestWriteGoVCR_V4Replays(t *testing.T) {
	ctx := context.Background()
	for _, tt := range []struct {
		name    string
		version string
		json    bool
	}{
		{"JSON20251125", "2025-11-25", true},
		{"SSE20251125", "2025-11-25", false},
		{"JSON20260728", "2026-07-28", true},
		{"SSE20260728", "2026-07-28", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			server := mcptest.NewServer("")
			live := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: tt.json}))
			defer live.Close()
			up, _ := url.Parse(live.URL + "/mcp")
			db, err := store.Open(ctx, filepath.Join(t.TempDir(), "db"))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			rec := &recorder.HTTP{Upstream: up, Sink: db}
			proxy := httptest.NewServer(rec)
			want := goVCRScript(ctx, t, mcptest.NewClient(), &mcp.StreamableClientTransport{Endpoint: proxy.URL + "/mcp"}, tt.version)
			if err := rec.Close(ctx); err != nil {
				t.Fatal(err)
			}
			proxy.Close()
			if err := db.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			recs, err := db.Recordings(ctx)
			if err != nil || len(recs) != 1 {
				t.Fatalf("Recordings = %d, %v; want one session", len(recs), err)
			}
			dir := t.TempDir()
			for _, f := range view.GoVCRFormats {
				if err := view.WriteGoVCR(f, recs[0], filepath.Join(dir, f+".yaml"), ""); err != nil {
					t.Fatalf("WriteGoVCR(%s): %v", f, err)
				}
			}
			live.Close() // go-vcr replays without it

			c, err := vcrcassette.Load(filepath.Join(dir, "go-vcr"))
			if err != nil {
				t.Fatalf("go-vcr v4 cannot load the go-vcr export: %v", err)
			}
			if got, want := len(c.Interactions), len(recs[0].Streams); got != want {
				t.Errorf("%d interactions; want %d, one per exchange", got, want)
			}
			if fi, err := os.Stat(filepath.Join(dir, "go-vcr.yaml")); err != nil || fi.Mode().Perm() != 0o600 {
				t.Errorf("go-vcr export: %v, mode %v; want 0600", err, fi.Mode())
			}

			v4, err := govcr4.New(filepath.Join(dir, "go-vcr"), govcr4.WithMode(govcr4.ModeReplayOnly), govcr4.WithSkipRequestLatency(true))
			if err != nil {
				t.Fatalf("go-vcr v4: %v", err)
			}
			defer v4.Stop()
			got := goVCRScript(ctx, t, mcptest.NewClient(), &mcp.StreamableClientTransport{
				Endpoint: live.URL + "/mcp", HTTPClient: v4.GetDefaultClient(), MaxRetries: -1,
			}, tt.version)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("go-vcr v4 replay differs from the live run (-live +replay):\n%s", diff)
			}

			v2, err := govcr2.NewAsMode(filepath.Join(dir, "go-vcr-v2"), govcr2.ModeReplaying, nil)
			if err != nil {
				t.Fatalf("go-vcr v2: %v", err)
			}
			v2.SkipRequestLatency = true
			defer v2.Stop()
			got = goVCRScript(ctx, t, mcptest.NewClient(), &mcp.StreamableClientTransport{
				Endpoint: live.URL + "/mcp", HTTPClient: &http.Client{Transport: v2}, MaxRetries: -1,
			}, tt.version)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("go-vcr v2 replay differs from the live run (-live +replay):\n%s", diff)
			}
		})
	}
}

// TestEncodeGoVCR_Formats: go-vcr v4 loads the default format and go-vcr
// v2's cannot be loaded by it (the reason the default changed); a session
// go-vcr cannot hold is the same *view.GoVCRError in both formats, with
// nothing written; an unknown format is an error.
func TestEncodeGoVCR_Formats(t *testing.T) {
	recs, err := store.LoadFile(context.Background(), "../cassettes/multi-gosdk-http-json.jsonl", 4, 5)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range view.GoVCRFormats {
		var b bytes.Buffer
		if err := view.EncodeGoVCR(&b, f, recs[0], "http://mcp.example"); err != nil {
			t.Fatalf("EncodeGoVCR(%s): %v", f, err)
		}
		if err := os.WriteFile(filepath.Join(dir, f+".yaml"), b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		b.Reset()
		var ge *view.GoVCRError
		if err := view.EncodeGoVCR(&b, f, recs[1], ""); !errors.As(err, &ge) || b.Len() != 0 {
			t.Errorf("EncodeGoVCR(%s, session 5) = %v, %d bytes; want a *view.GoVCRError and nothing written", f, err, b.Len())
		}
	}
	c, err := vcrcassette.Load(filepath.Join(dir, "go-vcr"))
	if err != nil {
		t.Fatalf("go-vcr v4 cannot load the default format: %v", err)
	}
	first := c.Interactions[0].Request
	if first.URL != "http://mcp.example/mcp" || first.Host != "mcp.example" || first.Proto != "HTTP/1.1" || first.ContentLength != int64(len(first.Body)) {
		t.Errorf("first request = %s host %q proto %q length %d; want the URL on --base-url, its host, HTTP/1.1 and the body's length", first.URL, first.Host, first.Proto, first.ContentLength)
	}
	if h := first.Headers; h.Get("User-Agent") != "" || h.Get("Content-Length") != "" || h.Get("Accept-Encoding") != "" || h.Get("Content-Type") != "application/json" {
		t.Errorf("first request headers = %v; want the client's, without what Go's transport adds", h)
	}
	if _, err := vcrcassette.Load(filepath.Join(dir, "go-vcr-v2")); !errors.Is(err, vcrcassette.ErrUnsupportedCassetteFormat) {
		t.Errorf("go-vcr v4 loading the v2 format: %v; want ErrUnsupportedCassetteFormat", err)
	}
	if err := view.EncodeGoVCR(new(bytes.Buffer), "go-vcr-v9", recs[0], ""); err == nil || !strings.Contains(err.Error(), "go-vcr, go-vcr-v2") {
		t.Errorf("EncodeGoVCR(go-vcr-v9) = %v; want an error naming the formats", err)
	}
}
