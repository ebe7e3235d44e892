package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/dnaeon/go-vcr.v2/cassette"
)

// TestExport_GoVCR: mcpvcr export SESSION --format go-vcr writes what go-vcr
// loads, to -o or stdout; a session go-vcr cannot replay exits 3 saying why.
func TestExport_GoVCR(t *testing.T) {
	c := filepath.Join("..", "..", "cassettes", "multi-gosdk-http-json.jsonl")
	out := filepath.Join(t.TempDir(), "x.yaml")
	res := mcpvcr(t, "", "export", "4", "--cassette", c, "--format", "go-vcr", "--base-url", "http://mcp.example", "-o", out)
	if res.code != exitOK {
		t.Fatalf("export -o exited %d: %s", res.code, res.stderr)
	}
	vc, err := cassette.Load(strings.TrimSuffix(out, ".yaml"))
	if err != nil {
		t.Fatalf("go-vcr cannot load the export: %v", err)
	}
	if got, want := vc.Interactions[0].Request.URL, "http://mcp.example/mcp"; got != want {
		t.Errorf("first URL = %q; want %q", got, want)
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	std := mcpvcr(t, "", "export", "4", "--cassette", c, "--format", "go-vcr", "--base-url", "http://mcp.example")
	if std.code != exitOK || std.stdout != string(file) {
		t.Errorf("export to stdout (exit %d) differs from -o's file", std.code)
	}

	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"5"}, exitFailure, "session 5 cannot be a go-vcr cassette: stream 26 (the standalone GET stream) carried 1 server message(s), the first roots/list at seq 8"},
		{[]string{"4", "5"}, exitUsage, "--format go-vcr writes one session, got 2"},
		{[]string{"4", "--base-url", "/mcp"}, exitUsage, `--base-url "/mcp" is not a scheme and host`},
	} {
		res := mcpvcr(t, "", append([]string{"export", "--cassette", c, "--format", "go-vcr"}, tt.args...)...)
		if res.code != tt.code || !strings.Contains(res.stderr, tt.want) || !strings.Contains(res.stderr, "try: ") {
			t.Errorf("export %v: exit %d, stderr:\n%s\nwant exit %d and %q with a hint", tt.args, res.code, res.stderr, tt.code, tt.want)
		}
	}
}
