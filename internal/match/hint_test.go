package match

import (
	"slices"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// TestMatch_HintRules: the rules a hint names, as data for callers that
// write them in another language, and the hint mcpvcr replay prints.
func TestMatch_HintRules(t *testing.T) {
	rec := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"now","arguments":{"when":"today","tz":"UTC"}}}`))
	live := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"now","arguments":{"when":"tomorrow","tz":"CET"}}}`))
	rules, tolerant := Match{}.HintRules(live, rec)
	if want := []string{"tools/call:params.arguments.tz", "tools/call:params.arguments.when"}; !slices.Equal(rules, want) || tolerant {
		t.Errorf("hintRules = %q, %v; want %q, false", rules, tolerant, want)
	}
	if got, want := (Match{}).Hint(live, rec), "--ignore would match it: --ignore 'tools/call:params.arguments.tz' --ignore 'tools/call:params.arguments.when'"; got != want {
		t.Errorf("hint = %q; want %q", got, want)
	}

	recInit := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"a"},"capabilities":{}}}`))
	liveInit := jsonrpc.Parse([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"b"},"capabilities":{}}}`))
	if rules, tolerant := (Match{Exact: true}).HintRules(liveInit, recInit); !tolerant || rules != nil {
		t.Errorf("exact hintRules = %q, %v; want tolerant", rules, tolerant)
	}
	if rules, tolerant := (Match{}).HintRules(liveInit, rec); rules != nil || tolerant {
		t.Errorf("hintRules across methods = %q, %v; want none", rules, tolerant)
	}
}
