package replayer

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/replayindex"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
	"github.com/mcpvcr/mcpvcr/store"
)

// manySessions returns the JSONL export of n stdio sessions that share
// their opening (initialize, tools/list) and then each call echo with a
// text of their own.
func manySessions(n int) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]any{"type": "mcpvcr", "version": 1})
	for s := 1; s <= n; s++ {
		_ = enc.Encode(map[string]any{"type": "session", "id": s, "transport": "stdio", "revision": "2025-11-25", "era": "legacy",
			"started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01Z", "exit_code": 0})
		_ = enc.Encode(map[string]any{"type": "stream", "id": 2*s - 1, "session": s, "kind": "stdin", "end": "complete", "closed_ns": 100})
		_ = enc.Encode(map[string]any{"type": "stream", "id": 2 * s, "session": s, "kind": "stdout", "end": "complete", "closed_ns": 100})
		lines := []string{
			`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"rec","version":"1.0"}}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"}}}`,
			`> {"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`> {"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
			`< {"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo"}]}}`,
			fmt.Sprintf(`> {"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s%d"}}}`, s),
			fmt.Sprintf(`< {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"from session %d"}]}}`, s),
		}
		for i, l := range lines {
			dir, stream := "s2c", 2*s
			if l[0] == '>' {
				dir, stream = "c2s", 2*s-1
			}
			_ = enc.Encode(map[string]any{"type": "frame", "session": s, "seq": i + 1, "stream": stream, "dir": dir, "offset_ns": i + 1, "raw": l[2:] + "\n"})
		}
	}
	return b.String()
}

func TestSource_LoadsOnlyCandidatesInPlay(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Import(t, manySessions(200))
	src, err := NewSource(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := src.Len(), 200; got != want {
		t.Fatalf("Len() = %d; want %d", got, want)
	}
	idx, err := replayindex.Hashes(ctx, db, script.Mode(Match{}))
	if err != nil || len(idx) != 200 {
		t.Fatalf("stored index: %d entries, %v; want 200", len(idx), err)
	}
	// A second Source reads the stored tree, loading nothing to start.
	stored, err := NewSource(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !stored.trees[script.Mode(Match{})].stored || stored.ix.Loads() != 0 {
		t.Fatalf("second Source: tree stored %v, %d sessions loaded; want the stored tree and none", stored.trees[script.Mode(Match{})].stored, stored.ix.Loads())
	}

	for _, tc := range []struct {
		src  *Source
		want int
	}{{src, 137}, {src, 1}, {stored, 200}, {stored, 42}} {
		src, want := tc.src, tc.want
		t.Run(fmt.Sprint(want), func(t *testing.T) {
			before := src.ix.Loads()
			got := replayLines(t, &Server{Source: src},
				`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"other","version":"2.0"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":11,"method":"tools/list"}`,
				fmt.Sprintf(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s%d"}}}`, want),
			)
			wantLines := []string{
				`{"jsonrpc":"2.0","id":10,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"}}}`,
				`{"jsonrpc":"2.0","id":11,"result":{"tools":[{"name":"echo"}]}}`,
				fmt.Sprintf(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"from session %d"}]}}`, want),
			}
			if diff := cmp.Diff(wantLines, got); diff != "" {
				t.Errorf("replayed lines (-want +got):\n%s", diff)
			}
			if n := src.ix.Loads() - before; n > 2 {
				t.Errorf("replay loaded %d sessions of 200; want at most 2", n)
			}
		})
	}
}

// replayLines serves one stdio client that sends lines one at a time,
// each after the answers to the previous one, and returns every line it
// got back.
func replayLines(t *testing.T, srv *Server, lines ...string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cr, cw := io.Pipe() // client -> server
	sr, sw := io.Pipe() // server -> client
	done := make(chan error, 1)
	go func() {
		_, err := srv.ServeStdio(ctx, struct {
			io.Reader
			io.Writer
		}{cr, sw})
		sw.Close()
		done <- err
	}()
	var got []string
	in := bufio.NewScanner(sr)
	for _, l := range lines {
		if _, err := io.WriteString(cw, l+"\n"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(l, `"id"`) {
			if !in.Scan() {
				t.Fatalf("no answer to %s", l)
			}
			got = append(got, in.Text())
		}
	}
	cw.Close()
	for in.Scan() {
		got = append(got, in.Text())
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return got
}

// ignoreArg is a matching rule that ignores one argument of tools/call.
type ignoreArg string

func (a ignoreArg) Apply(msg map[string]any) {
	if msg["method"] != "tools/call" {
		return
	}
	if p, ok := msg["params"].(map[string]any); ok {
		if args, ok := p["arguments"].(map[string]any); ok {
			delete(args, string(a))
		}
	}
}

func (a ignoreArg) String() string { return "tools/call:params.arguments." + string(a) }

// TestSource_MatchRules replays 200 sessions that share their opening
// under rules other than the tolerant default: each set of rules gets an
// index and a tree of its own, and a replay still loads only the
// candidates in play, giving the answer of the session the rules select.
func TestSource_MatchRules(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "many.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	// Each session calls echo with its own text and a "when" of its own
	// recording time, which --ignore leaves out.
	cassette := manySessions(200)
	for s := 1; s <= 200; s++ {
		cassette = strings.Replace(cassette, fmt.Sprintf(`\"text\":\"s%d\"}`, s), fmt.Sprintf(`\"text\":\"s%d\",\"when\":\"t%d\"}`, s, s), 1)
	}
	if _, err := db.Import(ctx, strings.NewReader(cassette)); err != nil {
		t.Fatal(err)
	}
	ids, err := db.SessionIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		mt         Match
		clientInfo string // the live initialize's clientInfo
		when       string // the live call's "when"
		want       int    // the session whose answer comes
	}{
		{name: "Exact", mt: Match{Exact: true}, clientInfo: `{"name":"rec","version":"1.0"}`, when: "t137", want: 137},
		{name: "Ignore", mt: Match{Ignore: []Rule{ignoreArg("when")}}, clientInfo: `{"name":"other","version":"2.0"}`, when: "now", want: 42},
		{name: "ExactIgnore", mt: Match{Exact: true, Ignore: []Rule{ignoreArg("when")}}, clientInfo: `{"name":"rec","version":"1.0"}`, when: "now", want: 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := &Server{Match: tt.mt}
			if err := srv.Load(ctx, db, ids); err != nil {
				t.Fatal(err)
			}
			if srv.Source == nil {
				t.Fatal("Load of 200 stdio sessions gave no Source")
			}
			idx, err := replayindex.Hashes(ctx, db, script.Mode(tt.mt))
			if err != nil || len(idx) != 200 {
				t.Fatalf("stored index of %s: %d entries, %v; want 200", tt.mt, len(idx), err)
			}
			for round := range 2 { // the second from a Source that reads the stored tree
				src := srv.Source
				if round == 1 {
					if src, err = newSource(ctx, db, nil, tt.mt, ids...); err != nil {
						t.Fatal(err)
					}
					if !src.trees[script.Mode(tt.mt)].stored || src.ix.Loads() != 0 {
						t.Fatalf("second Source: %d sessions loaded; want the stored tree and none", src.ix.Loads())
					}
				}
				before := src.ix.Loads()
				got := replayLines(t, &Server{Source: src, Match: tt.mt},
					`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":`+tt.clientInfo+`}}`,
					`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
					`{"jsonrpc":"2.0","id":11,"method":"tools/list"}`,
					fmt.Sprintf(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s%d","when":%q}}}`, tt.want, tt.when),
				)
				wantLines := []string{
					`{"jsonrpc":"2.0","id":10,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"}}}`,
					`{"jsonrpc":"2.0","id":11,"result":{"tools":[{"name":"echo"}]}}`,
					fmt.Sprintf(`{"jsonrpc":"2.0","id":12,"result":{"content":[{"type":"text","text":"from session %d"}]}}`, tt.want),
				}
				if diff := cmp.Diff(wantLines, got); diff != "" {
					t.Errorf("round %d: replayed lines (-want +got):\n%s", round, diff)
				}
				if n := src.ix.Loads() - before; n > 2 {
					t.Errorf("round %d: replay loaded %d sessions of 200; want at most 2", round, n)
				}
			}
		})
	}
}

// TestSource_ClosestAcrossCandidates sends, after the opening 200
// sessions share, a call that matches none of them: the report names the
// closest recorded frame of all 200 (the one session whose text it has),
// as when every session is loaded, not the closest of the one session
// that spoke for them all.
func TestSource_ClosestAcrossCandidates(t *testing.T) {
	ctx := context.Background()
	db, _ := storetest.Import(t, manySessions(200))
	recs, err := db.Recordings(ctx)
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(ctx, db, nil)
	if err != nil {
		t.Fatal(err)
	}
	const call = `{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"echo","arguments":{"text":"s150","extra":true}}}`
	for _, tt := range []struct {
		name string
		srv  *Server
	}{{"Lazy", &Server{Source: src}}, {"Eager", &Server{Recordings: recs}}} {
		t.Run(tt.name, func(t *testing.T) {
			got := replayLines(t, tt.srv,
				`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"other","version":"2.0"}}}`,
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
				`{"jsonrpc":"2.0","id":11,"method":"tools/list"}`,
				call,
			)
			if len(got) != 3 || !strings.Contains(got[2], `closest is session 150 seq 6 (request tools/call)`) || !strings.Contains(got[2], `params.arguments.extra`) {
				t.Errorf("answer to the unmatched call = %q; want -32019 naming session 150 seq 6 and the extra argument", got)
			}
		})
	}
}
