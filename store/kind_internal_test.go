package store

import (
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

// TestKind_MatchesParser: store.Kind mirrors jsonrpc.Kind value for value,
// so that kindOf is a conversion.
func TestKind_MatchesParser(t *testing.T) {
	pairs := []struct {
		s Kind
		j jsonrpc.Kind
	}{
		{KindInvalid, jsonrpc.KindInvalid}, {KindRequest, jsonrpc.KindRequest}, {KindNotification, jsonrpc.KindNotification},
		{KindResult, jsonrpc.KindResult}, {KindError, jsonrpc.KindError}, {KindBatch, jsonrpc.KindBatch}, {KindEmpty, jsonrpc.KindEmpty},
	}
	for _, p := range pairs {
		if int(p.s) != int(p.j) || p.s.String() != p.j.String() {
			t.Errorf("store %d %q, jsonrpc %d %q; want the same", p.s, p.s, p.j, p.j)
		}
	}
	if got := jsonrpc.ParseKind("unknown-" + KindEmpty.String()); got != jsonrpc.KindInvalid {
		t.Errorf("jsonrpc has a kind after empty: %v", got)
	}
}
