package mcpvcrtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/internal/jsonval"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// Frame is a recorded frame as a hook sees it: one JSON-RPC message (or
// batch) with its direction, and for an HTTP answer the SSE event that
// carried it. A hook edits it with Replace or Redact, which keep the bytes
// on the wire and the message in step, or drops it with Drop. A Frame is
// valid only during the hook call.
type Frame struct {
	f       *store.Frame
	kind    store.StreamKind
	red     *recorder.Redactor
	dropped bool
	discard bool
	edited  bool
}

// FromClient reports whether the client sent the frame.
func (f *Frame) FromClient() bool { return f.f.Direction == store.ClientToServer }

// Method is the JSON-RPC method of a request or notification; "" for an
// answer.
func (f *Frame) Method() string { return f.f.Method }

// Kind is the JSON-RPC kind: request, notification, result, error, batch,
// or, for what is not JSON-RPC, invalid or empty.
func (f *Frame) Kind() string { return f.f.Kind.String() }

// Message is the JSON-RPC message: the frame's bytes, or an SSE event's
// data. The caller must not change it.
func (f *Frame) Message() []byte {
	if f.f.Data == nil && !f.f.SSE {
		return f.f.Raw
	}
	return f.f.Data
}

// Raw is the frame exactly as it was on the wire (an SSE event with its
// event: and id: lines). The caller must not change it.
func (f *Frame) Raw() []byte { return f.f.Raw }

// Replace replaces every occurrence of old with new in the frame. Keep
// what it edits valid JSON: replace inside a string, or whole values. A
// client frame edited so is one a replay matches as edited (add a Match
// rule for the path, or use Redact, which adds it).
func (f *Frame) Replace(old, new string) {
	if old == "" || !bytes.Contains(f.f.Raw, []byte(old)) && !bytes.Contains(f.f.Data, []byte(old)) {
		return
	}
	f.f.Raw = bytes.ReplaceAll(f.f.Raw, []byte(old), []byte(new))
	if f.f.SSE {
		f.f.Data = bytes.ReplaceAll(f.f.Data, []byte(old), []byte(new))
	} else {
		f.f.Data = nil
	}
	f.f.Derive(f.kind)
	f.edited = true
}

// Redact replaces each secret in the frame with the placeholder the
// recorder stores for credentials (REDACTED- and a hash keyed per
// recording, the same for the same value, so a token in a header and in a
// body stay alike). The paths of a client message that held a secret are
// stored with the session as matching rules (label match-ignore, as
// Match("tools/call:params.arguments.key") would add), so a replay still
// matches the client, which sends the secret itself.
func (f *Frame) Redact(secrets ...string) {
	for _, s := range secrets {
		if s != "" {
			f.Replace(s, f.red.Placeholder(s))
		}
	}
}

// Drop leaves the frame out of the recording. Drop server frames (a noisy
// log notification, say); a dropped client frame is one a replay does not
// expect, and the client's next replay of it fails to match.
func (f *Frame) Drop() { f.dropped = true }

// AfterCapture calls fn with every frame Proxy records, before it is
// stored: nothing fn removes reaches the disk, even a temporary file.
func AfterCapture(fn func(*Frame)) Option {
	return optionFunc(func(c *config) { c.afterCapture = append(c.afterCapture, fn) })
}

// BeforeSave calls fn with every frame of the recording when Proxy writes
// the cassette, after the test passed. A hook that calls Frame.Discard
// keeps the whole recording out: the cassette is left as it was.
func BeforeSave(fn func(*Frame)) Option {
	return optionFunc(func(c *config) { c.beforeSave = append(c.beforeSave, fn) })
}

// BeforeReplay calls fn with every server frame of the cassette before a
// replay starts, to edit what the replay answers (Replace): a date the
// code under test compares with today, say. Edits are not written back.
// Command refuses it: its replay runs in a child process.
func BeforeReplay(fn func(*Frame)) Option {
	return optionFunc(func(c *config) { c.beforeReplay = append(c.beforeReplay, fn) })
}

// Discard, called from a BeforeSave hook, keeps the whole recording out of
// the cassette, which is left as it was.
func (f *Frame) Discard() { f.discard = true }

// hookSink runs the AfterCapture hooks on every frame before the Sink
// stores it.
type hookSink struct {
	recorder.Sink
	hooks []func(*Frame)
	red   *recorder.Redactor

	mu     sync.Mutex                 // guards kinds and ignore
	kinds  map[int64]store.StreamKind // stream id → kind
	ignore map[int64][]string         // session id → match rules for redacted paths
}

func (h *hookSink) OpenStream(ctx context.Context, st *store.Stream) error {
	if err := h.Sink.OpenStream(ctx, st); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.kinds == nil {
		h.kinds = map[int64]store.StreamKind{}
	}
	h.kinds[st.ID] = st.Kind
	return nil
}

func (h *hookSink) Append(ctx context.Context, sf *store.Frame) error {
	h.mu.Lock()
	kind := h.kinds[sf.StreamID]
	h.mu.Unlock()
	f := &Frame{f: sf, kind: kind, red: h.red}
	for _, fn := range h.hooks {
		fn(f)
		if f.dropped {
			return nil
		}
	}
	if f.edited && f.FromClient() {
		if rules := redactedRules(f); len(rules) > 0 {
			h.mu.Lock()
			if h.ignore == nil {
				h.ignore = map[int64][]string{}
			}
			h.ignore[sf.SessionID] = append(h.ignore[sf.SessionID], rules...)
			h.mu.Unlock()
		}
	}
	return h.Sink.Append(ctx, sf)
}

// rules returns the matching rules of what the hooks redacted, by session.
func (h *hookSink) rules() map[int64][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.ignore)
}

// withRules returns labels with rules added to its match-ignore label.
func withRules(labels map[string]string, rules []string) map[string]string {
	out := map[string]string{}
	for k, v := range labels {
		out[k] = v
	}
	lines := strings.Split(out[replayer.MatchIgnoreLabel], "\n")
	for _, r := range rules {
		if !slices.Contains(lines, r) {
			lines = append(lines, r)
		}
	}
	out[replayer.MatchIgnoreLabel] = strings.TrimSpace(strings.Join(lines, "\n"))
	return out
}

// redactedRules returns the --ignore rules, such as
// tools/call:params.arguments.key, for the string values of a client
// message that hold a placeholder.
func redactedRules(f *Frame) []string {
	var msg struct {
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	if json.Unmarshal(f.Message(), &msg) != nil || msg.Method == "" {
		return nil
	}
	var out []string
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case string:
			if strings.Contains(x, "REDACTED-") {
				out = append(out, msg.Method+":"+path)
			}
		case map[string]any:
			for k, e := range x {
				walk(e, path+jsonval.PathKey(k))
			}
		case []any:
			for i, e := range x {
				walk(e, fmt.Sprintf("%s[%d]", path, i))
			}
		}
	}
	walk(msg.Params, "params")
	slices.Sort(out)
	return out
}

// beforeReplay runs the BeforeReplay hooks on the server frames of recs.
func beforeReplay(recs []*store.Recording, hooks []func(*Frame)) {
	if len(hooks) == 0 {
		return
	}
	red := &recorder.Redactor{}
	for _, r := range recs {
		kinds := map[int64]store.StreamKind{}
		for _, st := range r.Streams {
			kinds[st.ID] = st.Kind
		}
		kept := r.Frames[:0]
		for i := range r.Frames {
			sf := &r.Frames[i]
			if sf.Direction == store.ServerToClient {
				f := &Frame{f: sf, kind: kinds[sf.StreamID], red: red}
				for _, fn := range hooks {
					if fn(f); f.dropped {
						break
					}
				}
				if f.dropped {
					continue
				}
			}
			kept = append(kept, *sf)
		}
		r.Frames = kept
	}
}

// beforeSave runs the BeforeSave hooks on the frames of export, a JSONL
// export, and returns the export they leave, or discard when one of them
// discarded the recording. The derived fields of edited frames are stale
// in it: Import derives them again.
//
// rules holds, by session, the matching rules for what AfterCapture
// redacted; the rules of what beforeSave's hooks redact are added to them.
func beforeSave(export []byte, hooks []func(*Frame), red *recorder.Redactor, rules map[int64][]string) (out []byte, discard bool, err error) {
	type line struct {
		rec     map[string]json.RawMessage // nil: kept as it was
		text    []byte
		session int64
	}
	var lines []*line
	sessions := map[int64]*line{}
	rules = maps.Clone(rules)
	if rules == nil {
		rules = map[int64][]string{}
	}
	sc := bufio.NewScanner(bytes.NewReader(export))
	sc.Buffer(nil, 1<<30)
	for sc.Scan() {
		text := slices.Clone(sc.Bytes())
		var head struct {
			Type    string `json:"type"`
			ID      int64  `json:"id"`
			Session int64  `json:"session"`
		}
		if err := json.Unmarshal(text, &head); err != nil {
			return nil, false, fmt.Errorf("read the recording: %w", err)
		}
		l := &line{text: text}
		switch head.Type {
		case "session":
			sessions[head.ID] = l
		case "frame":
			var fr struct {
				Dir     string  `json:"dir"`
				SSE     bool    `json:"sse"`
				Raw     string  `json:"raw"`
				RawB64  []byte  `json:"raw_b64"`
				Data    *string `json:"data"`
				DataB64 []byte  `json:"data_b64"`
			}
			if err := json.Unmarshal(text, &fr); err != nil {
				return nil, false, fmt.Errorf("read the recording: %w", err)
			}
			sf := &store.Frame{Raw: []byte(fr.Raw), SSE: fr.SSE, Direction: store.ServerToClient}
			if fr.RawB64 != nil {
				sf.Raw = fr.RawB64
			}
			if fr.Dir == "c2s" {
				sf.Direction = store.ClientToServer
			}
			switch {
			case fr.Data != nil:
				sf.Data = []byte(*fr.Data)
			case fr.DataB64 != nil:
				sf.Data = fr.DataB64
			}
			sf.Derive(store.StreamUnknown)
			f := &Frame{f: sf, red: red}
			for _, fn := range hooks {
				if fn(f); f.dropped {
					break
				}
			}
			discard = discard || f.discard
			if f.dropped {
				continue
			}
			if f.edited {
				if err := json.Unmarshal(text, &l.rec); err != nil {
					return nil, false, fmt.Errorf("read the recording: %w", err)
				}
				for _, k := range []string{"raw", "raw_b64", "data", "data_b64"} {
					delete(l.rec, k)
				}
				setBytes(l.rec, "raw", sf.Raw)
				if sf.SSE {
					setBytes(l.rec, "data", sf.Data)
				}
				if f.FromClient() {
					rules[head.Session] = append(rules[head.Session], redactedRules(f)...)
				}
			}
		}
		lines = append(lines, l)
	}
	if err := sc.Err(); err != nil {
		return nil, false, fmt.Errorf("read the recording: %w", err)
	}
	if discard {
		return nil, true, nil
	}
	for id, rs := range rules {
		l := sessions[id]
		if l == nil || len(rs) == 0 {
			continue
		}
		if err := json.Unmarshal(l.text, &l.rec); err != nil {
			return nil, false, fmt.Errorf("read the recording: %w", err)
		}
		var labels map[string]string
		if b, ok := l.rec["labels"]; ok {
			if err := json.Unmarshal(b, &labels); err != nil {
				return nil, false, fmt.Errorf("read the recording: %w", err)
			}
		}
		b, _ := json.Marshal(withRules(labels, rs))
		l.rec["labels"] = b
	}
	var buf bytes.Buffer
	for _, l := range lines {
		if l.rec != nil {
			b, err := json.Marshal(l.rec)
			if err != nil {
				return nil, false, err
			}
			l.text = b
		}
		buf.Write(l.text)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), false, nil
}

// setBytes sets key (as text) or key_b64 (when b is not UTF-8) in rec.
func setBytes(rec map[string]json.RawMessage, key string, b []byte) {
	if len(b) == 0 {
		return
	}
	if utf8.Valid(b) {
		rec[key], _ = json.Marshal(string(b))
		return
	}
	rec[key+"_b64"], _ = json.Marshal(b)
}

// runBeforeSave runs the BeforeSave hooks over what db holds and leaves
// the result in a new cassette under t.TempDir, which it returns; nil
// means a hook discarded the recording.
//
// The sessions of db are numbered from 1 in the order of their IDs, as the
// export numbers them: db is Proxy's own.
func runBeforeSave(ctx context.Context, t testing.TB, db *store.DB, hooks []func(*Frame), red *recorder.Redactor, rules map[int64][]string) (*store.DB, error) {
	var b bytes.Buffer
	if err := db.Export(ctx, &b); err != nil {
		return nil, err
	}
	out, discard, err := beforeSave(b.Bytes(), hooks, red, rules)
	if err != nil || discard {
		return nil, err
	}
	saved, err := store.Open(ctx, filepath.Join(t.TempDir(), "saved.db"))
	if err != nil {
		return nil, err
	}
	if _, err := saved.Import(ctx, bytes.NewReader(out)); err != nil {
		saved.Close()
		return nil, err
	}
	return saved, nil
}
