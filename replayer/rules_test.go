package replayer

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/rules"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestStoredMatch: the caller's paths come first, then each session's
// match-ignore paths, each path once; redacted names once; scrubbed if any
// session is.
func TestStoredMatch(t *testing.T) {
	a := storetest.LineRecording(t, 1, `> {"jsonrpc":"2.0","id":1,"method":"ping"}`)
	b := storetest.LineRecording(t, 2, `> {"jsonrpc":"2.0","id":1,"method":"ping"}`)
	a.Session.Labels = map[string]string{MatchIgnoreLabel: "tools/call:params.arguments.when\nparams.x", RedactLabel: "otp\nsessionKey"}
	b.Session.Labels = map[string]string{MatchIgnoreLabel: "// a comment\nparams.x\n\nparams.y", RedactLabel: "off\notp", ScrubLabel: "v1"}
	mt, err := StoredMatch(context.Background(), Match{Exact: true}, []string{"params.y", "params.x"}, Sessions{Recordings: []*store.Recording{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range mt.Ignore {
		got = append(got, r.String())
	}
	if want := []string{"params.y", "params.x", "tools/call:params.arguments.when"}; !slices.Equal(got, want) {
		t.Errorf("Ignore = %q; want %q", got, want)
	}
	if want := []string{"otp", "sessionKey"}; !slices.Equal(mt.Redact, want) {
		t.Errorf("Redact = %q; want %q", mt.Redact, want)
	}
	if !mt.Exact || !mt.Scrubbed {
		t.Errorf("Exact, Scrubbed = %v, %v; want true, true", mt.Exact, mt.Scrubbed)
	}

	b.Session.Labels[MatchIgnoreLabel] = "params[x"
	if _, err := StoredMatch(context.Background(), Match{}, nil, Sessions{Recordings: []*store.Recording{b}}); !errors.Is(err, rules.ErrBadPath) {
		t.Errorf("a bad stored path: err = %v; want one wrapping ErrBadPath", err)
	}
}
