package chaos

import (
	"bytes"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// retry: a resumable stream's priming event given another retry value,
// and the stream cut later; the client must wait about that long before
// it resumes.

func sitesRetry(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	// A resumable POST stream that opens with a priming event (the
	// event the retry goes on) with a response still to come.
	if st.Kind != store.PostStream || !st.SSE() || st.Status != 200 || st.End != store.EndComplete || resumedInRecording(rec, st.ID) {
		return out
	}
	if len(evs) < 3 || evs[0].Kind != store.KindEmpty || !evs[0].HasEventID || evs[0].EventID == "" {
		return out
	}
	for e := 1; e < len(evs); e++ {
		if evs[e-1].HasEventID && evs[e-1].EventID != "" {
			f := base
			f.Event, f.Seq = e, evs[e-1].Seq
			out = append(out, f)
		}
	}
	return out
}

func judgeRetry(inj *injection, after, mine []chaosAction) (string, Verdict) {
	if inj.cutAt.IsZero() {
		return "got the retry, but the stream went no further than the planned cut", VerdictNotObserved
	}
	// How the client resumed first, whether or not the rest reached
	// it: a resumption too soon fails either way.
	cut := *inj
	cut.Kind, cut.delivered = FaultCutResumable, true
	did, v := judge(&cut, after)
	if v != VerdictPass {
		return did, v
	}
	did = strings.TrimSuffix(did, " and got the rest of the stream")
	for _, a := range mine {
		if a.method == http.MethodGet && a.lastEventID != "" {
			gap := a.at.Sub(inj.cutAt).Round(time.Millisecond)
			if gap < inj.Delay/2 {
				return fmt.Sprintf("%s %s after the cut, sooner than half the retry of %s it was given", did, gap, inj.Delay), VerdictFail
			}
			if !inj.delivered {
				return did + "; the rest of the stream was not seen delivered", VerdictNotObserved
			}
			return fmt.Sprintf("%s %s after the cut (no sooner than half the retry of %s it was given) and got the rest of the stream", did, gap, inj.Delay), VerdictPass
		}
	}
	return did, v
}

// withRetry returns the SSE event block raw with a retry field of d (in
// milliseconds) added.
func withRetry(raw []byte, d time.Duration) []byte {
	b := bytes.TrimRight(raw, "\r\n")
	return fmt.Appendf(slices.Clip(b), "\nretry: %d\n\n", d.Milliseconds())
}
