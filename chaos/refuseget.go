package chaos

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/mcpvcr/mcpvcr/store"
)

// refuse-get: the standalone GET stream answered 405; the client must
// carry on without it.

func sitesRefuseGet(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	// Only a GET stream that carries nothing the session needs.
	if st.Kind == store.GetStream && st.Status == 200 && !slices.ContainsFunc(framesOfStream(rec, st.ID), isProtocol) {
		out = append(out, base)
	}
	return out
}

func judgeRefuseGet(inj *injection, after, mine []chaosAction) (string, Verdict) {
	gets, other := 0, -1
	for i, a := range mine {
		if a.method == http.MethodGet && a.lastEventID == "" {
			gets++
		} else if other < 0 {
			other = i
		}
	}
	if gets >= 3 {
		return fmt.Sprintf("asked for the refused GET stream %d more times", gets), VerdictFail
	}
	if other < 0 {
		return "sent nothing more", VerdictNotObserved
	}
	return "carried on without the GET stream (next: " + describe(mine[other]) + ")", VerdictPass
}
