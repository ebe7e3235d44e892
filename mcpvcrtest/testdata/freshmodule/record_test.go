package fresh_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
)

const apiKey = "sk-fresh-0001"

// weather starts a live Go SDK server whose forecast tool takes an API
// key and counts its calls.
func weather(t *testing.T) (url string, calls *atomic.Int64) {
	calls = new(atomic.Int64)
	server := mcp.NewServer(&mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	type args struct {
		City   string `json:"city"`
		APIKey string `json:"apiKey"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "forecast"}, func(_ context.Context, _ *mcp.CallToolRequest, in args) (*mcp.CallToolResult, any, error) {
		calls.Add(1)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "sunny in " + in.City + " (key " + in.APIKey + ")"}}}, nil, nil
	})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, &mcp.StreamableHTTPOptions{JSONResponse: true}))
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp", calls
}

func forecast(t *testing.T, srv *httptest.Server, city string) string {
	t.Helper()
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "fresh-app", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpvcrtest.Endpoint(srv)}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "forecast", Arguments: map[string]any{"city": city, "apiKey": apiKey}})
	if err != nil {
		t.Fatalf("forecast: %v", err)
	}
	return res.Content[0].(*mcp.TextContent).Text
}

// TestModes uses each mode, as options.
func TestModes(t *testing.T) {
	upstream, calls := weather(t)
	cassette := filepath.Join(t.TempDir(), "modes.jsonl")
	step := func(name string, mode mcpvcrtest.Mode, wantCalls int64) {
		t.Run(name, func(t *testing.T) {
			before := calls.Load()
			srv := mcpvcrtest.Proxy(t, cassette, upstream, mode)
			if got := forecast(t, srv, "Oslo"); !strings.HasPrefix(got, "sunny in Oslo") {
				t.Errorf("forecast = %q", got)
			}
			if got := calls.Load() - before; got != wantCalls {
				t.Errorf("%s called the server %d times; want %d", mode, got, wantCalls)
			}
		})
	}
	step("RecordOnceRecords", mcpvcrtest.ModeRecordOnce, 1)
	step("RecordOnceReplays", mcpvcrtest.ModeRecordOnce, 0)
	step("ReplayOnly", mcpvcrtest.ModeReplayOnly, 0)
	step("NewEpisode", mcpvcrtest.ModeReplayWithNewEpisodes, 1) // this test has no sessions in it yet
	step("NewEpisode", mcpvcrtest.ModeReplayWithNewEpisodes, 1) // NewEpisode#01: another name
	step("RecordOnly", mcpvcrtest.ModeRecordOnly, 1)
	step("Passthrough", mcpvcrtest.ModePassthrough, 1)
}

// TestPerCase records one cassette per case under testdata (the default
// mode records what is missing); TestFreshModule runs it again with
// MCPVCR_MODE=replay-only, when the server must not be called.
func TestPerCase(t *testing.T) {
	upstream, calls := weather(t)
	cases := []struct{ name, city string }{{"oslo", "Oslo"}, {"rain in Lima?", "Lima"}}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			srv := mcpvcrtest.Proxy(t, mcpvcrtest.Cassette(t), upstream,
				mcpvcrtest.AfterCapture(func(f *mcpvcrtest.Frame) { f.Redact(apiKey) }))
			if got := forecast(t, srv, tt.city); !strings.HasPrefix(got, "sunny in "+tt.city) {
				t.Errorf("forecast = %q", got)
			}
		})
	}
	want := int64(len(cases))
	if os.Getenv(mcpvcrtest.ModeEnv) == "replay-only" {
		want = 0
	}
	if calls.Load() != want {
		t.Errorf("the server was called %d times; want %d", calls.Load(), want)
	}
	for _, f := range []string{"testdata/TestPerCase/oslo.jsonl", "testdata/TestPerCase/rain_in_Lima_.jsonl"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("per-case cassette: %v", err)
		} else if strings.Contains(string(b), apiKey) {
			t.Errorf("%s holds the API key", f)
		}
	}
}

// TestHooks uses each hook.
func TestHooks(t *testing.T) {
	upstream, _ := weather(t)
	cassette := filepath.Join(t.TempDir(), "hooks.jsonl")
	t.Run("Record", func(t *testing.T) {
		srv := mcpvcrtest.Proxy(t, cassette, upstream, mcpvcrtest.ModeRecordOnly,
			mcpvcrtest.AfterCapture(func(f *mcpvcrtest.Frame) { f.Redact(apiKey) }),
			mcpvcrtest.BeforeSave(func(f *mcpvcrtest.Frame) {
				if !f.FromClient() {
					f.Replace("sunny", "cloudy")
				}
			}))
		forecast(t, srv, "Oslo")
	})
	t.Run("Discard", func(t *testing.T) {
		srv := mcpvcrtest.Proxy(t, cassette, upstream, mcpvcrtest.ModeRecordOnly,
			mcpvcrtest.BeforeSave(func(f *mcpvcrtest.Frame) { f.Discard() }))
		forecast(t, srv, "Bergen")
	})
	t.Run("Replay", func(t *testing.T) {
		srv := mcpvcrtest.Proxy(t, cassette, upstream, mcpvcrtest.ModeReplayOnly,
			mcpvcrtest.BeforeReplay(func(f *mcpvcrtest.Frame) { f.Replace("cloudy", "snowy") }))
		if got := forecast(t, srv, "Oslo"); !strings.HasPrefix(got, "snowy in Oslo (key REDACTED-") {
			t.Errorf("forecast = %q; want the saved answer, edited for the replay", got)
		}
	})
}
