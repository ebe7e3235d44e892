package replayer_test

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/replayer"
)

// refuseCalls is a Hook of a test's own: it notes every point it is
// called at and answers each tools/call with 503.
type refuseCalls struct {
	mu     sync.Mutex // guards the fields below
	wheres []replayer.Where
	ids    []string // the session ids seen at AtRequest
	refuse bool
}

func (h *refuseCalls) Act(p *replayer.Point) replayer.Action {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wheres = append(h.wheres, p.Where)
	if p.Where != replayer.AtRequest {
		return replayer.Action{}
	}
	h.ids = append(h.ids, p.Session.ID()+"="+p.Request.Header.Get("Mcp-Session-Id"))
	if h.refuse && bytes.Contains(p.Body, []byte(`"tools/call"`)) {
		return replayer.Action{Status: http.StatusServiceUnavailable, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("refused by the hook\n")}
	}
	return replayer.Action{}
}

// TestHook (hook.go): a Hook is called where faults act, with the live
// session, and its answer replaces the recorded one: the Go SDK client
// lists tools as recorded, and its call fails with the hook's 503. Its
// twin, refuse off, shows the call passing without it.
func TestHook(t *testing.T) {
	for _, refuse := range []bool{true, false} {
		h := &refuseCalls{refuse: refuse}
		_, url := serveCassette(t, "multi-gosdk-http-sse", "/mcp", func(s *replayer.Server) { s.Hook = h })
		ctx := testContext(t)
		cs, err := mcptest.NewClientAs(upgraded).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatalf("refuse %v: tools/list: %v", refuse, err)
		}
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 2}})
		switch {
		case refuse && (err == nil || !strings.Contains(err.Error(), "Service Unavailable")):
			t.Errorf("tools/call, refused by the hook: %v; want Service Unavailable (503)", err)
		case !refuse && err != nil:
			t.Errorf("tools/call, hook passing: %v", err)
		}
		cs.Close()
		h.mu.Lock()
		for _, w := range []replayer.Where{replayer.AtArrive, replayer.AtStart, replayer.AtRequest, replayer.AtBefore, replayer.AtAfter} {
			if !slices.Contains(h.wheres, w) {
				t.Errorf("refuse %v: the hook was never called at %d (called at %v)", refuse, w, h.wheres)
			}
		}
		for _, id := range h.ids {
			if got, sent, _ := strings.Cut(id, "="); got != sent && sent != "" {
				t.Errorf("refuse %v: Session.ID() = %q where the client sent Mcp-Session-Id %q", refuse, got, sent)
			}
		}
		h.mu.Unlock()
	}
}

// eventPoints is a Hook of a test's own that notes the points at which
// events are sent.
type eventPoints struct {
	mu     sync.Mutex // guards points
	points []replayer.Point
}

func (h *eventPoints) Act(p *replayer.Point) replayer.Action {
	if p.Where == replayer.AtBefore || p.Where == replayer.AtAfter {
		h.mu.Lock()
		h.points = append(h.points, *p)
		h.mu.Unlock()
	}
	return replayer.Action{}
}

// TestHook_Events (reply.go): whichever answers a request (a live
// session's stream, or a 2026-07-28 exchange of its own), the Hook is
// called before and after each event it sends, in that order, and after
// an event Point.Events counts the events (comments aside) sent so far;
// before one it is 0 for a session and the count before it for an
// exchange. A JSON answer is seen whole, once, before it goes.
func TestHook_Events(t *testing.T) {
	for _, tc := range []struct {
		cassette, version string
		pooled            bool
	}{
		{"multi-gosdk-http-sse", mcptest.V20251125, false},
		{"multi-gosdk-http-json", mcptest.V20251125, false},
		{"multi-gosdk-http-2026-07-28", mcptest.V20260728, true},
	} {
		t.Run(tc.cassette, func(t *testing.T) {
			h := &eventPoints{}
			_, url := serveCassette(t, tc.cassette, "/mcp", func(s *replayer.Server) { s.Hook = h })
			ctx := testContext(t)
			cs, err := mcptest.NewClientAs(upgraded).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: tc.version})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := cs.ListTools(ctx, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 40, "b": 2}}); err != nil {
				t.Fatal(err)
			}
			cs.Close()
			h.mu.Lock()
			defer h.mu.Unlock()
			sent := map[*http.Request]int{}               // events sent per answer, comments aside
			before := map[*http.Request]*replayer.Point{} // per answer: an AtBefore awaiting its AtAfter
			events, wholes := 0, 0
			for i := range h.points {
				p := &h.points[i]
				if p.Pooled != tc.pooled {
					t.Errorf("point %d: Pooled = %v; want %v", i, p.Pooled, tc.pooled)
				}
				if p.Frame == nil {
					if p.Where != replayer.AtBefore || p.Events != 0 {
						t.Errorf("point %d: a JSON answer at %d with Events %d; want AtBefore, 0", i, p.Where, p.Events)
					}
					wholes++
					continue
				}
				if p.Where == replayer.AtBefore {
					want := 0
					if tc.pooled {
						want = sent[p.Request]
					}
					if before[p.Request] != nil || p.Events != want {
						t.Errorf("point %d: AtBefore seq %d with Events %d (before the previous event's AtAfter: %v); want Events %d", i, p.Frame.Seq, p.Events, before[p.Request] != nil, want)
					}
					before[p.Request] = p
					continue
				}
				if b := before[p.Request]; b == nil || b.Frame != p.Frame {
					t.Errorf("point %d: AtAfter seq %d not right after its AtBefore", i, p.Frame.Seq)
				}
				before[p.Request] = nil
				if !p.Frame.Comment {
					sent[p.Request]++
					events++
				}
				if want := map[bool]int{false: sent[p.Request], true: 0}[p.Frame.Comment]; p.Events != want {
					t.Errorf("point %d: AtAfter seq %d (comment %v) with Events %d; want %d", i, p.Frame.Seq, p.Frame.Comment, p.Events, want)
				}
			}
			if events+wholes < 2 {
				t.Errorf("the Hook saw %d events and %d JSON answers; want the answers to initialize, tools/list and tools/call", events, wholes)
			}
		})
	}
}

// TestHook_ArriveBody (hook.go, AtArrive): a Body returned at AtArrive is
// what replay reads instead of the live body. The client calls add with
// arguments the recording never had; a hook that puts back the recorded
// arguments gets the recorded result, and without it the call is not
// matched.
func TestHook_ArriveBody(t *testing.T) {
	for _, putBack := range []bool{true, false} {
		h := replayer.HookFunc(func(p *replayer.Point) replayer.Action {
			if p.Where == replayer.AtArrive && putBack && bytes.Contains(p.Body, []byte(`"b":20`)) {
				return replayer.Action{Body: bytes.Replace(p.Body, []byte(`"b":20`), []byte(`"b":2`), 1)}
			}
			return replayer.Action{}
		})
		_, url := serveCassette(t, "multi-gosdk-http-sse", "/mcp", func(s *replayer.Server) { s.Hook = h })
		ctx := testContext(t)
		cs, err := mcptest.NewClientAs(upgraded).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			t.Fatal(err)
		}
		_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "add", Arguments: map[string]any{"a": 1, "b": 20}})
		if putBack != (err == nil) {
			t.Errorf("put back %v: tools/call add 1+20: %v", putBack, err)
		}
		cs.Close()
	}
}
