package mcpvcrtest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
)

const secret = "sk-live-4242"

// secretServer has a tool whose argument is an API key, and whose answer
// repeats it, and logs every call.
func secretServer(t *testing.T) string {
	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	type args struct {
		City   string `json:"city"`
		APIKey string `json:"apiKey"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "forecast"}, func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + in.City + " for key " + in.APIKey}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

func forecast(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "app", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv), MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": "Oslo", "apiKey": secret}})
	if err != nil {
		t.Fatalf("CallTool: %v", err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// TestHooks: AfterCapture redacts the key before anything is stored, and
// the replay still matches the client, which sends the key; BeforeSave
// edits the recording and can discard it; BeforeReplay edits an answer.
func TestHooks(t *testing.T) {
	t.Setenv(mcpvcrtest.ModeEnv, "")
	upstream := secretServer(t)
	dir := t.TempDir()
	for _, name := range []string{"after.jsonl", "after.db"} {
		cassette := filepath.Join(dir, name)
		redact := mcpvcrtest.AfterCapture(func(f *mcpvcrtest.Frame) { f.Redact(secret) })
		t.Run("AfterCapture_"+name, func(t *testing.T) {
			srv := mcpvcrtest.Proxy(t, cassette, upstream, mcpvcrtest.ModeRecordOnly, redact)
			if got, want := forecast(t, srv), "sunny in Oslo for key "+secret; got != want {
				t.Errorf("live forecast = %q; want %q", got, want)
			}
		})
		b, err := os.ReadFile(cassette)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), secret) {
			t.Errorf("%s holds the secret", name)
		}
		if name == "after.jsonl" && !strings.Contains(string(b), `"labels":{"match-ignore":"tools/call:params.arguments.apiKey"}`) {
			t.Errorf("%s does not store the redacted path as a matching rule:\n%s", name, b)
		}
		t.Run("Replay_"+name, func(t *testing.T) {
			srv := mcpvcrtest.Proxy(t, cassette, upstream, mcpvcrtest.ModeReplayOnly, redact)
			got := forecast(t, srv)
			if !strings.HasPrefix(got, "sunny in Oslo for key REDACTED-") {
				t.Errorf("replayed forecast = %q; want the recorded answer with the placeholder", got)
			}
		})
	}

	saved := filepath.Join(dir, "saved.jsonl")
	t.Run("BeforeSave", func(t *testing.T) {
		srv := mcpvcrtest.Proxy(t, saved, upstream, mcpvcrtest.ModeRecordOnly, mcpvcrtest.BeforeSave(func(f *mcpvcrtest.Frame) {
			f.Redact(secret)
			if !f.FromClient() {
				f.Replace("sunny", "cloudy")
			}
		}))
		forecast(t, srv)
	})
	b, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), "cloudy in Oslo") {
		t.Errorf("saved cassette holds the secret or lacks the edit:\n%s", b)
	}
	t.Run("BeforeReplay", func(t *testing.T) {
		srv := mcpvcrtest.Proxy(t, saved, upstream, mcpvcrtest.ModeReplayOnly, mcpvcrtest.BeforeReplay(func(f *mcpvcrtest.Frame) {
			f.Replace("cloudy", "snowy")
		}))
		if got := forecast(t, srv); !strings.HasPrefix(got, "snowy in Oslo") {
			t.Errorf("forecast = %q; want the answer BeforeReplay edited", got)
		}
	})
	after, _ := os.ReadFile(saved)
	if string(after) != string(b) {
		t.Errorf("BeforeReplay changed the cassette")
	}

	t.Run("Discard", func(t *testing.T) {
		srv := mcpvcrtest.Proxy(t, saved, upstream, mcpvcrtest.ModeRecordOnly, mcpvcrtest.BeforeSave(func(f *mcpvcrtest.Frame) {
			if f.Method() == "tools/call" {
				f.Discard()
			}
		}))
		forecast(t, srv)
	})
	if after, _ := os.ReadFile(saved); string(after) != string(b) {
		t.Errorf("a discarded recording changed the cassette")
	}
}

// TestHooks_Drop: AfterCapture drops the server's progress notifications
// before they are stored; the replay gives the result without them.
func TestHooks_Drop(t *testing.T) {
	server := mcptest.NewServer("")
	live := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)) // SSE answers
	defer live.Close()
	cassette := filepath.Join(t.TempDir(), "progress.jsonl")
	call := func(t *testing.T, srv *httptest.Server) (progress int, result string) {
		ctx := context.Background()
		var mu sync.Mutex
		c := mcp.NewClient(&mcp.Implementation{Name: "app", Version: "1"}, &mcp.ClientOptions{
			ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
				mu.Lock()
				defer mu.Unlock()
				progress++
			},
		})
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv), MaxRetries: -1}, nil)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		defer cs.Close()
		p := &mcp.CallToolParams{Name: "reconnect"}
		p.SetProgressToken("p1")
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("CallTool: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		return progress, res.Content[0].(*mcp.TextContent).Text
	}
	drop := mcpvcrtest.AfterCapture(func(f *mcpvcrtest.Frame) {
		if f.Method() == "notifications/progress" {
			f.Drop()
		}
	})
	t.Run("Record", func(t *testing.T) {
		// The client gets the notifications live (whether its handler has
		// run by the time the call returns is the SDK's business).
		if _, res := call(t, mcpvcrtest.Proxy(t, cassette, live.URL+"/mcp", mcpvcrtest.ModeRecordOnly, drop)); res != "reconnected" {
			t.Errorf("live: %q; want reconnected", res)
		}
	})
	b, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "notifications/progress") || !strings.Contains(string(b), "reconnected") {
		t.Errorf("the cassette holds a dropped frame, or lacks the result:\n%s", b)
	}
	live.Close()
	t.Run("Replay", func(t *testing.T) {
		if n, res := call(t, mcpvcrtest.Proxy(t, cassette, "http://127.0.0.1:1/mcp", mcpvcrtest.ModeReplayOnly)); n != 0 || res != "reconnected" {
			t.Errorf("replay: %d progress notifications, %q; want 0 and reconnected", n, res)
		}
	})
}

// headerRT adds a header to every request.
type headerRT struct{ name, value string }

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return http.DefaultTransport.RoundTrip(r)
}

// TestRedact: a header Redact names is stored as a placeholder.
func TestRedact(t *testing.T) {
	upstream := secretServer(t)
	cassette := filepath.Join(t.TempDir(), "header.jsonl")
	t.Run("Record", func(t *testing.T) {
		srv := mcpvcrtest.Proxy(t, cassette, upstream, mcpvcrtest.ModeRecordOnly, mcpvcrtest.Redact([]string{"X-Weather-Key"}, nil))
		ctx := context.Background()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "app", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: mcpvcrtest.Endpoint(srv), HTTPClient: &http.Client{Transport: headerRT{"X-Weather-Key", secret}}, MaxRetries: -1,
		}, nil)
		if err != nil {
			t.Fatalf("Connect: %v", err)
		}
		cs.Close()
	})
	b, err := os.ReadFile(cassette)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), `"X-Weather-Key":["REDACTED-`) {
		t.Errorf("the header is not stored as a placeholder:\n%s", b)
	}
}
