package matrix

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
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

// checkOrder is P2 over stdio: the client runs against mcpvcr replay
// --trace with mcpvcr record in front of it, so that a second recording
// holds what replay sent, in order, and replay's trace of what released
// each frame. Its server frames must come in the recorded order, and none
// may be released by a client frame recorded after it (held back until
// that frame came). The wire cannot tell that: a client that does not
// wait for a frame (one that cancelled its call and goes on) may write
// between two frames replay released at once.
func checkOrder(t *testing.T, c cell, r recording) {
	db2 := filepath.Join(t.TempDir(), "replayed.db")
	argv := []string{mcpvcrBin, "record", "--cassette", db2, "--", mcpvcrBin, "replay", "1", "--stdio", "--trace", "--cassette", r.db}
	got := c.client.run(t, endpoint{transport: "stdio", argv: argv}, call{rev: c.rev, plan: c.plan, info: "matrix-replayer", notes: len(r.live.t.Notes)})
	got.t = lateNotes(t, r, got.t)
	if diff := diffTranscripts(r.live.t, got.t); diff != "" {
		t.Errorf("through record in front of replay, the client saw otherwise (-live +replay):\n%s", diff)
	}
	orig, seen := timeline(t, r.db, 1), timeline(t, db2, 1)
	// The server frames of the replay's recording, by key and occurrence.
	at := map[string][]int{}
	for i, f := range seen {
		if f.Dir != "c2s" {
			at[f.key()] = append(at[f.key()], i)
		}
	}
	used := map[string]int{}
	last, lastKey := -1, ""
	for _, f := range orig {
		if f.Dir == "c2s" {
			continue
		}
		k := f.key()
		n := used[k]
		used[k]++
		if n >= len(at[k]) {
			t.Errorf("recorded server frame #%d (%s) never reached the client", f.Seq, k)
			continue
		}
		if pos := at[k][n]; pos < last {
			t.Errorf("recorded server frame #%d (%s) came before %s, recorded earlier: out of order", f.Seq, k, lastKey)
		} else {
			last, lastKey = pos, k
		}
	}
	traced := 0
	for _, l := range stderrLines(t, db2) {
		m := traceRE.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		traced++
		sent, _ := strconv.Atoi(m[1])
		if m[2] == "" {
			continue
		}
		if by, _ := strconv.Atoi(m[2]); by > sent {
			t.Errorf("recorded server frame #%d was held back until #%d, a client frame recorded after it: %s", sent, by, l)
		}
	}
	if traced == 0 {
		t.Errorf("replay --trace wrote no trace line")
	}
	if t.Failed() {
		t.Logf("the replay as recorded:\n%s", mcpvcr(t, "show", "1", "--cassette", db2).stdout)
	}
}

// traceRE reads a line of mcpvcr replay --trace: the recorded seq sent,
// and that of the client frame that released it, if one did.
var traceRE = regexp.MustCompile(`^mcpvcr replay: sent #(\d+) .*?, (?:released by #(\d+) |released at the start)`)

// stderrLines returns the lines session 1 of db recorded on stderr.
func stderrLines(t *testing.T, db string) []string {
	t.Helper()
	res := mcpvcr(t, "export", "1", "--cassette", db)
	if res.code != 0 {
		t.Fatalf("mcpvcr export exited %d: %s", res.code, res.stderr)
	}
	stderr := map[int64]bool{}
	var lines []string
	for _, l := range strings.Split(res.stdout, "\n") {
		var rec struct {
			Type   string `json:"type"`
			ID     int64  `json:"id"`
			Kind   string `json:"kind"`
			Stream int64  `json:"stream"`
			Raw    string `json:"raw"`
		}
		if json.Unmarshal([]byte(l), &rec) != nil {
			continue
		}
		switch {
		case rec.Type == "stream" && rec.Kind == "stderr":
			stderr[rec.ID] = true
		case rec.Type == "frame" && stderr[rec.Stream]:
			lines = append(lines, strings.TrimRight(rec.Raw, "\r\n"))
		}
	}
	return lines
}
