package chaos

import (
	"slices"

	"github.com/mcpvcr/mcpvcr/store"
)

// close-early: a 2026-07-28 response stream closed before its response;
// the request is lost, and the client sends it again or gives up on it.

func sitesCloseEarly(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if st.Kind != store.PostStream || !st.SSE() || st.Status != 200 {
		return out
	}
	if r := slices.IndexFunc(evs, func(f *store.Frame) bool { return f.Kind.IsResponse() }); r >= 0 {
		f := base
		f.Event, f.Seq = r, evs[r].Seq
		out = append(out, f)
	}
	return out
}

func judgeCloseEarly(inj *injection, after, mine []chaosAction) (string, Verdict) {
	return judgeLost(inj, mine, "closed early")
}
