package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	cassette2 "gopkg.in/dnaeon/go-vcr.v2/cassette"
	cassette4 "gopkg.in/dnaeon/go-vcr.v4/pkg/cassette"
)

// TestExport_GoVCR: mcpvcr export SESSION --format go-vcr writes what go-vcr
// v4 loads, and --format go-vcr-v2 what go-vcr v2 loads, to -o or stdout; a
// session go-vcr cannot replay exits 3 saying why.
func TestExport_GoVCR(t *testing.T) {
	parallel(t)
	c := filepath.Join("..", "..", "cassettes", "multi-gosdk-http-json.jsonl")
	for _, tt := range []struct {
		format string
		load   func(name string) (url string, version int, err error)
		want   int
	}{
		{"go-vcr", func(name string) (string, int, error) {
			vc, err := cassette4.Load(name)
			if err != nil {
				return "", 0, err
			}
			return vc.Interactions[0].Request.URL, vc.Version, nil
		}, 2},
		{"go-vcr-v2", func(name string) (string, int, error) {
			vc, err := cassette2.Load(name)
			if err != nil {
				return "", 0, err
			}
			return vc.Interactions[0].Request.URL, vc.Version, nil
		}, 1},
	} {
		out := filepath.Join(t.TempDir(), "x.yaml")
		res := mcpvcr(t, "", "export", "4", "--cassette", c, "--format", tt.format, "--base-url", "http://mcp.example", "-o", out)
		if res.code != exitOK {
			t.Fatalf("export --format %s -o exited %d: %s", tt.format, res.code, res.stderr)
		}
		u, version, err := tt.load(strings.TrimSuffix(out, ".yaml"))
		if err != nil {
			t.Fatalf("--format %s: go-vcr cannot load the export: %v", tt.format, err)
		}
		if u != "http://mcp.example/mcp" || version != tt.want {
			t.Errorf("--format %s: first URL %q, cassette version %d; want http://mcp.example/mcp and %d", tt.format, u, version, tt.want)
		}
		file, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		std := mcpvcr(t, "", "export", "4", "--cassette", c, "--format", tt.format, "--base-url", "http://mcp.example")
		if std.code != exitOK || std.stdout != string(file) {
			t.Errorf("--format %s: export to stdout (exit %d) differs from -o's file", tt.format, std.code)
		}
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"5"}, exitFailure, "session 5 cannot be a go-vcr cassette: stream 26 (the standalone GET stream) carried 1 server message(s), the first roots/list at seq 8"},
		{[]string{"4", "5"}, exitUsage, "--format go-vcr writes one session, got 2"},
		{[]string{"4", "--base-url", "/mcp"}, exitUsage, `--base-url "/mcp" is not a scheme and host`},
		{[]string{"5", "--format", "go-vcr-v2"}, exitFailure, "session 5 cannot be a go-vcr cassette: stream 26"},
	} {
		res := mcpvcr(t, "", append([]string{"export", "--cassette", c, "--format", "go-vcr"}, tt.args...)...)
		if res.code != tt.code || !strings.Contains(res.stderr, tt.want) || !strings.Contains(res.stderr, "try: ") {
			t.Errorf("export %v: exit %d, stderr:\n%s\nwant exit %d and %q with a hint", tt.args, res.code, res.stderr, tt.code, tt.want)
		}
	}

	// A stdio session: the hint replays it over stdio, not --listen (which
	// refuses stdio sessions).
	stdio := filepath.Join("..", "..", "cassettes", "gosdk-stdio-2025-06-18.jsonl")
	res := mcpvcr(t, "", "export", "1", "--cassette", stdio, "--format", "go-vcr")
	if res.code != exitFailure || !strings.Contains(res.stderr, "recorded over stdio") || !strings.Contains(res.stderr, "mcpvcr replay 1 --stdio\n") || strings.Contains(res.stderr, "--listen") {
		t.Errorf("export of a stdio session as go-vcr: exit %d, stderr:\n%s\nwant exit 3 and a hint to replay it with --stdio", res.code, res.stderr)
	}
}
