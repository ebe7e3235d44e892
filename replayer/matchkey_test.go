package replayer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/jsonval"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
)

// hugeText is longer than jsonval.KeyTextMax, so that a frame holding it is keyed
// by digest.
var hugeText = strings.Repeat("a long argument <&> é ", 4*jsonval.KeyTextMax/20)

// keyCases are client messages in pairs that match or not: the same
// values written otherwise (members in another order, white space, 1.0
// for 1, another clientInfo), and values a byte apart; small, and huge.
func keyCases() []string {
	var out []string
	for _, text := range []string{"hi", hugeText} {
		q, _ := json.Marshal(text)
		s := string(q)
		out = append(out,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":`+s+`,"n":1}}}`,
			`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{ "arguments":{"n":1.0, "text":`+s+`},"name":"echo"}}`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":`+s[:len(s)-2]+`!","n":1}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":`+s+`,"n":2}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"a"},"capabilities":{"x":`+s+`}}}`,
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"b"},"capabilities":{"x":`+s+`}}}`,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":`+s+`,"_meta":{"traceparent":"x"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/message","params":{"data":`+s+`}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":`+s+`}]}}`,
			`{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":`+s+`,"type":"text"}]}}`,
		)
	}
	return out
}

// textKey is a match key as replay made it before long keys went by
// digest: the whole canonical text.
func textKey(mt Match, m jsonrpc.Message) string {
	if m.Kind.IsResponse() {
		return "answer " + jsonrpc.Key(mt.AnswerValue("sampling/createMessage", m))
	}
	return m.Kind.String() + " " + m.Method + " " + jsonrpc.Key(mt.Params(m.Method, m.Params))
}

// key is the match key replay uses now.
func key(mt Match, m jsonrpc.Message) string {
	if m.Kind.IsResponse() {
		return "answer " + mt.AnswerKey("sampling/createMessage", m)
	}
	k, _ := mt.Key(m, nil)
	return k
}

// TestMatchKey_DigestChangesNoMatch checks that keying long values by
// digest matches exactly the frames the whole text matched, in every
// mode: a small frame's key is its text as before, a huge frame's is
// short, and two frames have equal keys exactly when their texts are.
func TestMatchKey_DigestChangesNoMatch(t *testing.T) {
	cases := keyCases()
	for _, mt := range []Match{{}, {Exact: true}, {Scrubbed: true}} {
		keys, texts := make([]string, len(cases)), make([]string, len(cases))
		for i, c := range cases {
			m := jsonrpc.Parse([]byte(c))
			keys[i], texts[i] = key(mt, m), textKey(mt, m)
			if len(texts[i]) <= jsonval.KeyTextMax && keys[i] != texts[i] {
				t.Errorf("%v: small frame %d: key %q, want its text %q", mt, i, keys[i], texts[i])
			}
			if len(texts[i]) > jsonval.KeyTextMax+100 && len(keys[i]) > 200 {
				t.Errorf("%v: huge frame %d: key of %d bytes, want a digest", mt, i, len(keys[i]))
			}
		}
		for i := range cases {
			for j := range cases {
				if same, was := keys[i] == keys[j], texts[i] == texts[j]; same != was {
					t.Errorf("%v: frames %d and %d: keys equal %v, texts equal %v", mt, i, j, same, was)
				}
			}
		}
	}
}

// TestSource_HugeFramesMatch replays two sessions that differ only at the
// end of a huge argument: the candidate tree (built from the stored
// index, where such a frame is keyed by digest) and the engine pick the
// session whose frame the client sends, written otherwise.
func TestSource_HugeFramesMatch(t *testing.T) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	_ = enc.Encode(map[string]any{"type": "mcpvcr", "version": 1})
	call := func(id int, text string, reordered bool) string {
		q, _ := json.Marshal(text)
		if reordered {
			return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"arguments":{"text":%s},  "name":"echo"}}`, id, q)
		}
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%s}}}`, id, q)
	}
	for s := 1; s <= 2; s++ {
		_ = enc.Encode(map[string]any{"type": "session", "id": s, "transport": "stdio", "revision": "2025-11-25", "era": "legacy",
			"started_at": "2026-01-01T00:00:00Z", "ended_at": "2026-01-01T00:00:01Z", "exit_code": 0})
		_ = enc.Encode(map[string]any{"type": "stream", "id": 2*s - 1, "session": s, "kind": "stdin", "end": "complete", "closed_ns": 100})
		_ = enc.Encode(map[string]any{"type": "stream", "id": 2 * s, "session": s, "kind": "stdout", "end": "complete", "closed_ns": 100})
		lines := []string{
			`> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
			`< {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}`,
			"> " + call(2, hugeText+fmt.Sprint(s), false),
			fmt.Sprintf(`< {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"from session %d"}]}}`, s),
		}
		for i, l := range lines {
			dir, stream := "s2c", 2*s
			if l[0] == '>' {
				dir, stream = "c2s", 2*s-1
			}
			_ = enc.Encode(map[string]any{"type": "frame", "session": s, "seq": i + 1, "stream": stream, "dir": dir, "offset_ns": i + 1, "raw": l[2:] + "\n"})
		}
	}
	db, _ := storetest.Import(t, b.String())
	if err := Index(context.Background(), db, nil); err != nil {
		t.Fatal(err)
	}
	for _, s := range []int{2, 1} {
		src, err := NewSource(context.Background(), db, nil)
		if err != nil {
			t.Fatal(err)
		}
		got := replayLines(t, &Server{Source: src},
			`{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`,
			call(8, hugeText+fmt.Sprint(s), true))
		want := []string{
			`{"jsonrpc":"2.0","id":7,"result":{"protocolVersion":"2025-11-25"}}`,
			fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"from session %d"}]}}`, s),
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("session %d: replayed lines (-want +got):\n%s", s, diff)
		}
	}
}
