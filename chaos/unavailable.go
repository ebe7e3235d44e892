package chaos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// 503: a POST answered once with 503 and Retry-After; a client that
// retries must wait.

func sites503(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if st.Kind == store.PostStream && requests >= 2 {
		out = append(out, Fault{Kind: base.Kind, Request: requests})
	}
	return out
}

func judge503(inj *injection, _, mine []chaosAction) (string, Verdict) {
	for _, a := range mine {
		if a.method == http.MethodPost && a.body == inj.body {
			if gap := a.at.Sub(inj.cutAt); !inj.cutAt.IsZero() && gap < retryAfter503/2 {
				return fmt.Sprintf("retried the request %s after the 503, sooner than half its Retry-After of %s", gap.Round(time.Millisecond), retryAfter503), VerdictFail
			}
			return "retried the request, no sooner than half its Retry-After", VerdictPass
		}
	}
	// Said the same whatever the client sent instead: which request
	// comes next, or whether any does before the run ends, varies with a
	// concurrent client's timing between runs of one seed.
	return "did not retry (no retry is required)", VerdictNotObserved
}

// retryAfter503 is the Retry-After a 503 of chaos gives.
const retryAfter503 = time.Second

// unavailable503 answers with a transient 503 and Retry-After.
func unavailable503() replayer.Action {
	return replayer.Action{Status: http.StatusServiceUnavailable,
		Header: http.Header{"Retry-After": {fmt.Sprint(int(retryAfter503 / time.Second))}, "Content-Type": {"text/plain; charset=utf-8"}},
		Body:   []byte("mcpvcr replay --chaos: service unavailable (an injected fault)\n")}
}

// jsonError is an answer with status and a JSON-RPC error of code and
// msg.
func jsonError(status, code int, msg string) replayer.Action {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage("null"), "error": map[string]any{"code": code, "message": msg}})
	return replayer.Action{Status: status, Header: http.Header{"Content-Type": {"application/json"}}, Body: b}
}
