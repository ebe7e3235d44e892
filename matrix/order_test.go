package matrix

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// A timelineFrame is a frame of mcpvcr show --format json.
type timelineFrame struct {
	Seq    int    `json:"seq"`
	Stream string `json:"stream"`
	Dir    string `json:"dir"`
	Kind   string `json:"kind"`
	Method string `json:"method"`
}

func (f timelineFrame) key() string { return f.Dir + " " + f.Kind + " " + f.Method }

// timeline returns the frames of session n of db.
func timeline(t *testing.T, db string, n int) []timelineFrame {
	t.Helper()
	res := mcpvcr(t, "show", fmt.Sprint(n), "--cassette", db, "--format", "json")
	if res.code != 0 {
		t.Fatalf("mcpvcr show %d exited %d: %s", n, res.code, res.stderr)
	}
	var v struct {
		Frames []timelineFrame `json:"frames"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &v); err != nil {
		t.Fatalf("mcpvcr show --format json: %v", err)
	}
	var out []timelineFrame
	for _, f := range v.Frames {
		if !strings.HasPrefix(f.Stream, "stderr") {
			out = append(out, f)
		}
	}
	return out
}

// A place is where a server frame came in a replay's recording: its
// position, and the number of client frames before it.
type place struct{ pos, clientsBefore int }

// checkOrder is P2 over stdio: the client runs against mcpvcr replay with
// mcpvcr record in front of it, so that a second recording holds what
// replay sent and when. Its server frames must come in the recorded
// order, and none after more client frames than preceded it in the
// recording (held back until a client frame recorded after it).
func checkOrder(t *testing.T, c cell, r recording) {
	db2 := filepath.Join(t.TempDir(), "replayed.db")
	argv := []string{mcpvcrBin, "record", "--cassette", db2, "--", mcpvcrBin, "replay", "1", "--stdio", "--cassette", r.db}
	got := c.client.run(t, endpoint{transport: "stdio", argv: argv}, call{rev: c.rev, plan: c.plan, info: "matrix-replayer", notes: len(r.live.t.Notes)})
	if diff := diffTranscripts(r.live.t, got.t); diff != "" {
		t.Errorf("through record in front of replay, the client saw otherwise (-live +replay):\n%s", diff)
	}
	orig, seen := timeline(t, r.db, 1), timeline(t, db2, 1)
	// Server frames of the replay's recording, by key and occurrence,
	// with the number of client frames before each.
	at := map[string][]place{}
	clients := 0
	for i, f := range seen {
		if f.Dir == "c2s" {
			clients++
			continue
		}
		at[f.key()] = append(at[f.key()], place{i, clients})
	}
	used := map[string]int{}
	clients, last, lastKey := 0, -1, ""
	prev := place{-1, -1} // where the server frame recorded before f came, if no client frame was recorded between
	for _, f := range orig {
		if f.Dir == "c2s" {
			clients++
			prev = place{-1, -1}
			continue
		}
		k := f.key()
		n := used[k]
		used[k]++
		if n >= len(at[k]) {
			t.Errorf("recorded server frame #%d (%s) never reached the client", f.Seq, k)
			continue
		}
		p := at[k][n]
		if p.pos < last {
			t.Errorf("recorded server frame #%d (%s) came before %s, recorded earlier: out of order", f.Seq, k, lastKey)
		}
		last, lastKey = p.pos, k
		if p.clientsBefore > clients && !raced(seen, prev, p, clients) {
			t.Errorf("recorded server frame #%d (%s), recorded after %d client frames, was held back until %d", f.Seq, k, clients, p.clientsBefore)
		}
		prev = p
	}
	if t.Failed() {
		t.Logf("the replay as recorded:\n%s", mcpvcr(t, "show", "1", "--cassette", db2).stdout)
	}
}

// raced reports whether the client frames seen before the server frame at
// p, and not recorded before it, raced a write rather than released it:
// the server frame recorded just before it, with no client frame between
// them, came on time (after clients client frames), and only client frames
// came between the two. Replay released both at once; a client that does
// not wait for the second (one that cancelled its call and goes on, say)
// can write in between, and record, in front of replay, sees its frame
// first.
func raced(seen []timelineFrame, prev, p place, clients int) bool {
	if prev.pos < 0 || prev.clientsBefore != clients || prev.pos > p.pos {
		return false
	}
	for _, f := range seen[prev.pos+1 : p.pos] {
		if f.Dir != "c2s" {
			return false
		}
	}
	return true
}
