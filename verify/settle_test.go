package verify

import (
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/store"
)

// TestPlan_KeepsTheRecordedTimeSinceInitialized: the first request after
// notifications/initialized waits as long after it as the recorded client
// did, and the session lasts as long after it as the recorded one: a
// server that finishes its setup, or asks for something on a timer of
// its own, after initialized meets a verify run as it met the recording.
func TestPlan_KeepsTheRecordedTimeSinceInitialized(t *testing.T) {
	rec := storetest.LineRecording(t, 1, initReq, initResp, inited, listReq,
		`< {"jsonrpc":"2.0","id":2,"result":{"tools":[]}}`)
	at := []time.Duration{0, 5 * time.Millisecond, 10 * time.Millisecond, 40 * time.Millisecond, 45 * time.Millisecond}
	for i := range rec.Frames {
		rec.Frames[i].Offset = at[i]
	}
	for i := range rec.Streams {
		rec.Streams[i].Closed, rec.Streams[i].End = 400*time.Millisecond, store.EndComplete
	}
	p := buildPlan(rec)
	var initedKey string
	for i := range p.steps {
		st := &p.steps[i]
		if len(st.msgs) == 1 && st.msgs[0].Method == "notifications/initialized" {
			initedKey = exchangeKey(st)
		}
		if len(st.msgs) == 1 && st.msgs[0].Method == "tools/list" {
			if !hasLinger(st.waits, initedKey, 30*time.Millisecond) {
				t.Errorf("tools/list waits %+v; want a linger of 30ms after notifications/initialized", st.waits)
			}
		}
	}
	if initedKey == "" {
		t.Fatal("no notifications/initialized step")
	}
	if !hasLinger(p.final, initedKey, 390*time.Millisecond) {
		t.Errorf("final waits %+v; want a linger of 390ms after notifications/initialized (the recorded session's end)", p.final)
	}
}

func hasLinger(ws []wait, id string, after time.Duration) bool {
	for _, w := range ws {
		if w.kind == waitLinger && w.id == id && w.after == after {
			return true
		}
	}
	return false
}
