package mcptest

import (
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testTimeout bounds each script run.
const testTimeout = 60 * time.Second

// inProcess connects a fresh server of variant to an in-memory transport
// and returns the client's end. The server session ends with the test.
func inProcess(tb testing.TB, variant string) mcp.Transport {
	tb.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := NewServer(variant).Connect(context.Background(), st, nil)
	if err != nil {
		tb.Fatalf("connect server: %v", err)
	}
	tb.Cleanup(func() { ss.Close() })
	return ct
}

func runCtx(tb testing.TB) context.Context {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	tb.Cleanup(cancel)
	return ctx
}

// stepNames returns the names of the steps of t.
func stepNames(t Transcript) []string {
	var names []string
	for _, s := range t.Steps {
		names = append(names, s.Name)
	}
	return names
}

func TestScript_Deterministic(t *testing.T) {
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			ctx := runCtx(t)
			first := Run(ctx, t, inProcess(t, V1), v)
			second := Run(ctx, t, inProcess(t, V1), v)
			if diff := cmp.Diff(first, second); diff != "" {
				t.Errorf("Run() differs between two runs (-first +second):\n%s", diff)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite the golden transcripts in testdata/script")

// TestScript_Golden compares each version's in-process transcript with
// testdata/script/<version>.golden; go test -update rewrites them.
func TestScript_Golden(t *testing.T) {
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			got, err := json.MarshalIndent(Run(runCtx(t), t, inProcess(t, V1), v), "", "  ")
			if err != nil {
				t.Fatalf("marshal transcript: %v", err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", "script", v+".golden")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden transcript (go test -update writes it): %v", err)
			}
			if diff := cmp.Diff(string(want), string(got)); diff != "" {
				t.Errorf("transcript at %s differs from %s (-want +got):\n%s", v, path, diff)
			}
		})
	}
}

func TestScript_Contents(t *testing.T) {
	legacy := []string{"initialize", "tools/list", "tools/call echo", "tools/call add", "tools/call info",
		"tools/call progress", "logging/setLevel", "tools/call log", "tools/call slow",
		"resources/list", "resources/read", "resources/read item", "resources/templates/list",
		"prompts/list", "prompts/get", "tools/call sample", "tools/call elicit", "tools/call roots", "tools/call fail", "tools/call reconnect"}
	modern := slices.Clone(legacy)
	modern[0] = "server/discover"
	for _, v := range Versions {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			tr := Run(runCtx(t), t, inProcess(t, V1), v)
			if tr.Requested != v || tr.Negotiated != v {
				t.Errorf("Run() requested %q, negotiated %q; want %q for both", tr.Requested, tr.Negotiated, v)
			}
			names := legacy
			if Modern(v) {
				names = modern
			}
			if diff := cmp.Diff(names, stepNames(tr)); diff != "" {
				t.Errorf("step names mismatch (-want +got):\n%s", diff)
			}
			for _, c := range []struct {
				step, path string
				want       any
			}{
				{"tools/call echo", "content.0.text", "hello"},
				{"tools/call add", "structuredContent.sum", 5.0},
				{"tools/call info", "structuredContent.version", "1.0.0"},
				{"resources/read", "contents.0.text", StaticText},
				{"resources/read item", "contents.0.text", "item 42"},
				{"prompts/get", "messages.0.content.text", "Hello, Ada!"},
				{"tools/call sample", "structuredContent.text", SamplePrefix + "Say hello."},
				{"tools/call roots", "structuredContent.uris.1", Roots[1].URI},
				{"tools/call fail", "isError", true},
			} {
				s, _ := tr.Step(c.step)
				if got := lookup(s.Result, c.path); got != c.want {
					t.Errorf("step %q result %s = %v; want %v (error %+v)", c.step, c.path, got, c.want, s.Error)
				}
			}

			s, _ := tr.Step("tools/call elicit")
			if v < V20250618 {
				if s.Skipped == "" {
					t.Errorf("step tools/call elicit ran at %s; want it skipped", v)
				}
			} else if got := lookup(s.Result, "structuredContent.content.name"); got != ElicitContent["name"] {
				t.Errorf("step tools/call elicit name = %v; want %v", got, ElicitContent["name"])
			}
			if s, _ := tr.Step("logging/setLevel"); Modern(v) != (s.Skipped != "") {
				t.Errorf("step logging/setLevel skipped = %q at %s; want skipped only in 2026-07-28", s.Skipped, v)
			}

			s, _ = tr.Step("tools/call progress")
			if got, want := len(s.Notifications), 3; got != want {
				t.Errorf("step tools/call progress got %d notifications; want %d", got, want)
			}
			s, _ = tr.Step("tools/call log")
			var levels []any
			for _, n := range s.Notifications {
				if n.Method == "notifications/message" {
					levels = append(levels, lookup(n.Params, "level"))
				}
			}
			wantLevels := []any{"debug", "info", "notice", "warning", "error"}
			if diff := cmp.Diff(wantLevels, levels); diff != "" {
				t.Errorf("step tools/call log levels mismatch (-want +got):\n%s", diff)
			}
			s, _ = tr.Step("tools/call slow")
			if s.Error == nil || !s.Error.Cancelled || len(s.Notifications) != 1 {
				t.Errorf("step tools/call slow = %+v; want one notification and a cancellation error", s)
			}
		})
	}
}

func TestScript_V2(t *testing.T) {
	for _, v := range []string{V20250618, V20260728} {
		t.Run(v, func(t *testing.T) {
			t.Parallel()
			tr := Run(runCtx(t), t, inProcess(t, V2), v)
			s, _ := tr.Step("tools/list")
			var tools []any
			for _, tool := range lookup(s.Result, "tools").([]any) {
				tools = append(tools, lookup(tool, "name"))
			}
			wantTools := []any{"add", "echo", "elicit", "fail", "info", "log", "multiply", "progress", "reconnect", "roots", "sample", "slow"}
			if diff := cmp.Diff(wantTools, tools); diff != "" {
				t.Errorf("v2 tools mismatch (-want +got):\n%s", diff)
			}
			if s, _ := tr.Step("tools/call info"); lookup(s.Result, "structuredContent.version") != "2.0.0" {
				t.Errorf("v2 info = %v; want version 2.0.0", s.Result)
			}
			// add takes an optional c now; the script's call, without it,
			// answers as before.
			if s, _ := tr.Step("tools/call add"); lookup(s.Result, "structuredContent.sum") != 5.0 {
				t.Errorf("v2 add = %v; want sum 5", s.Result)
			}
			var props []string
			for _, tool := range lookup(s.Result, "tools").([]any) {
				if lookup(tool, "name") == "add" {
					for k := range lookup(tool, "inputSchema.properties").(map[string]any) {
						props = append(props, k)
					}
				}
			}
			slices.Sort(props)
			if diff := cmp.Diff([]string{"a", "b", "c"}, props); diff != "" {
				t.Errorf("v2 add's input properties (-want +got):\n%s", diff)
			}
		})
	}
}

// lookup follows a dotted path of map keys and slice indexes through
// generic JSON, returning nil where the path does not exist.
func lookup(v any, path string) any {
	for _, key := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[key]
		case []any:
			i, err := strconv.Atoi(key)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}
