package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRecord_ServerCommandForms runs mcpvcr record with the server
// command in each form a client config can carry, for a server whose
// command has its own dash flags and a "--" of its own: the server gets
// exactly its argv every time.
func TestRecord_ServerCommandForms(t *testing.T) {
	parallel(t)
	// The "server" prints its arguments to stderr, which record passes
	// through, and exits.
	script := `printf "<%s>" "$@" >&2`
	want := "<--no-warnings><--><x y>"
	tests := []struct {
		name string
		env  []string
		args []string
	}{
		{"NoDoubleDash", nil, []string{"sh", "-c", script, "sh", "--no-warnings", "--", "x y"}},
		{"DoubleDash", nil, []string{"--", "sh", "-c", script, "sh", "--no-warnings", "--", "x y"}},
		{"ServerFlag", nil, []string{"--server", `sh -c '` + script + `' sh --no-warnings -- "x y"`}},
		{"ServerEnv", []string{"MCPVCR_SERVER=sh -c '" + script + `' sh --no-warnings -- 'x y'`}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "c.db")
			res := mcpvcrEnv(t, tt.env, append([]string{"record", "--cassette", db}, tt.args...)...)
			if res.code != 0 || !strings.Contains(res.stderr, want) {
				t.Errorf("record %q exited %d; want 0 and the server to print %s; stderr:\n%s", tt.args, res.code, want, res.stderr)
			}
		})
	}
	t.Run("LiteralDoubleDash", func(t *testing.T) {
		// "-- --": the first is record's, the second is the command.
		res := mcpvcr(t, "", "record", "--cassette", filepath.Join(t.TempDir(), "c.db"), "--", "--", "x")
		if res.code != 3 || !strings.Contains(res.stderr, `start server "--"`) {
			t.Errorf("record -- -- x exited %d; want 3 and a failure to start the command \"--\":\n%s", res.code, res.stderr)
		}
	})
	t.Run("Both", func(t *testing.T) {
		res := mcpvcr(t, "", "record", "--cassette", filepath.Join(t.TempDir(), "c.db"), "--server", "a b", "c")
		if res.code != 2 || !strings.Contains(res.stderr, "both") {
			t.Errorf("record --server and a command exited %d; want 2:\n%s", res.code, res.stderr)
		}
	})
}
