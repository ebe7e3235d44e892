package probe

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/recordtest"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

// recordStdio records the Go SDK client at version against the Go SDK
// test server over stdio (pipes, in process) through recorder.Stdio: it
// lists tools, calls echo "hi", lists prompts, calls roots (the server
// asks roots/list) and closes.
func recordStdio(t *testing.T, version string) []*store.Recording {
	t.Helper()
	return recordStdioWith(t, nil, func(ctx context.Context, r io.ReadCloser, w io.WriteCloser) { goSDKStdio(ctx, t, r, w, version) })
}

// recordStdioWith records client against the Go SDK test server, which
// speaks versions (nil: every one), over stdio through recorder.Stdio.
func recordStdioWith(t *testing.T, versions []string, client func(ctx context.Context, r io.ReadCloser, w io.WriteCloser)) []*store.Recording {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	server := func(r io.ReadCloser, w io.WriteCloser) {
		_ = mcptest.ServerConfig{Versions: versions}.NewServer().Run(ctx, &mcp.IOTransport{Reader: r, Writer: w})
	}
	return []*store.Recording{recordtest.Stdio(ctx, t, server, func(r io.ReadCloser, w io.WriteCloser) { client(ctx, r, w) })}
}

// goSDKStdio runs the Go SDK client at version over r and w as goSDK
// does over HTTP: it lists the tools page by page, calls echo, lists
// prompts, calls roots (legacy) and closes.
func goSDKStdio(ctx context.Context, t *testing.T, r io.ReadCloser, w io.WriteCloser, version string) {
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.IOTransport{Reader: r, Writer: w}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Logf("connect: %v", err)
		w.Close()
		return
	}
	defer cs.Close()
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Logf("tools: %v", err)
			break
		}
		if n++; n > 50 {
			break
		}
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Logf("echo: %v", err)
	}
	if _, err := cs.ListPrompts(ctx, nil); err != nil {
		t.Logf("prompts: %v", err)
	}
	if !mcptest.Modern(version) {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots", Arguments: map[string]any{}}); err != nil {
			t.Logf("roots: %v", err)
		}
	}
}

// replayStdio serves recs over stdio with a probe Hook of kinds to run,
// which gets the client's ends of the pipes (it closes w when done), and
// returns the Hook's results and report.
func replayStdio(t *testing.T, recs []*store.Recording, kinds []Kind, run func(r io.ReadCloser, w io.WriteCloser)) ([]Result, string) {
	t.Helper()
	var logs strings.Builder
	var mu sync.Mutex
	logger := slog.New(slog.NewTextHandler(writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return logs.Write(b)
	}), nil))
	h := New(kinds, logger)
	srv := &replayer.Server{Recordings: recs, Hook: h, Logger: logger, Wait: 5 * time.Second}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		if _, err := srv.ServeStdio(t.Context(), struct {
			io.Reader
			io.Writer
		}{inR, outW}); err != nil {
			t.Logf("replay: %v", err)
		}
		outW.Close()
	}()
	run(outR, inW)
	inW.Close()
	<-done
	srv.Close()
	var out strings.Builder
	h.Write(&out, "")
	mu.Lock()
	defer mu.Unlock()
	return h.Results(), out.String() + logs.String()
}

// lines is a raw JSON-RPC client over stdio.
type lines struct {
	t   *testing.T
	r   *bufio.Reader
	w   io.Writer
	rec *store.Recording
	c   *raw // for the recorded bodies
}

func newLines(t *testing.T, r io.Reader, w io.Writer, recs []*store.Recording) *lines {
	return &lines{t: t, r: bufio.NewReader(r), w: w, rec: recs[0], c: &raw{t: t, rec: recs[0], version: recs[0].Session.Revision}}
}

// send writes the recorded client's method (see raw.body), then reads
// lines up to the answer to it; a server request on the way is handed to
// answer (nil: not answered).
func (l *lines) send(method string, edit func(map[string]any), answer func(m map[string]json.RawMessage)) map[string]json.RawMessage {
	l.t.Helper()
	body := l.c.body(method, edit)
	if _, err := l.w.Write(append(body, '\n')); err != nil {
		l.t.Fatal(err)
	}
	var sent map[string]json.RawMessage
	_ = json.Unmarshal(body, &sent)
	if sent["id"] == nil {
		return nil
	}
	for {
		line, err := l.r.ReadBytes('\n')
		if err != nil {
			l.t.Fatalf("read: %v", err)
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(line, &m) != nil {
			continue
		}
		if m["method"] != nil && m["id"] != nil && answer != nil {
			answer(m)
			continue
		}
		if string(m["id"]) == string(sent["id"]) && m["method"] == nil {
			return m
		}
	}
}

// start initializes as the recorded client did.
func (l *lines) start() {
	l.send("initialize", nil, nil)
	l.send("notifications/initialized", nil, nil)
}

// TestStdio_Cursors: over stdio, a raw client that asks again with
// cursor "" fails empty-cursor before 2026-07-28, one that goes on
// passes; one that sends a repeated cursor again fails repeated-cursor,
// one that stops passes.
func TestStdio_Cursors(t *testing.T) {
	recs := recordStdio(t, legacyRev)
	for _, tc := range []struct {
		kind  Kind
		again func(l *lines)
		want  Verdict
	}{
		{EmptyCursor, nil, VerdictPass},
		{EmptyCursor, func(l *lines) { l.send("tools/list", cursorEdit(""), nil) }, VerdictFail},
		{RepeatedCursor, func(l *lines) { l.send("tools/list", cursorEdit(repeatCursor), nil) }, VerdictPass},
		{RepeatedCursor, func(l *lines) {
			l.send("tools/list", cursorEdit(repeatCursor), nil)
			l.send("tools/list", cursorEdit(repeatCursor), nil)
		}, VerdictFail},
	} {
		res, report := replayStdio(t, recs, []Kind{tc.kind}, func(r io.ReadCloser, w io.WriteCloser) {
			l := newLines(t, r, w, recs)
			l.start()
			first := l.send("tools/list", nil, nil)
			if !containsCursor(string(first["result"]), "") {
				t.Errorf("%s: the first page %s has no nextCursor", tc.kind, first["result"])
			}
			if tc.again != nil {
				tc.again(l)
			}
			l.send("tools/call", nil, nil)
		})
		if r := one(t, res, report); r.Verdict != tc.want {
			t.Errorf("%s: verdict %s (%s); want %s", tc.kind, r.Verdict, r.Did, tc.want)
		}
	}
}

// TestStdio_StringID: over stdio, a raw client that answers roots/list
// with the id as a number fails; one that echoes the string passes; both
// get the call's result.
func TestStdio_StringID(t *testing.T) {
	recs := recordStdio(t, legacyRev)
	for _, asSent := range []bool{false, true} {
		res, report := replayStdio(t, recs, []Kind{StringID}, func(r io.ReadCloser, w io.WriteCloser) {
			l := newLines(t, r, w, recs)
			l.start()
			l.send("tools/list", nil, nil)
			got := ""
			m := l.send("tools/call", func(p map[string]any) { p["name"] = "roots"; p["arguments"] = map[string]any{} }, func(m map[string]json.RawMessage) {
				got = string(m["id"])
				id := m["id"]
				if !asSent {
					id = json.RawMessage(strings.Trim(got, `"`))
				}
				if _, err := w.Write(append(l.c.recordedAnswer(id), '\n')); err != nil {
					t.Fatal(err)
				}
			})
			if m["result"] == nil || len(got) < 2 || got[0] != '"' {
				t.Errorf("asSent=%v: the server request came with id %s, the call was answered %v; want a string id and the result", asSent, got, m)
			}
		})
		r := one(t, res, report)
		if want := map[bool]Verdict{false: VerdictFail, true: VerdictPass}[asSent]; r.Verdict != want {
			t.Errorf("asSent=%v: verdict %s (%s); want %s", asSent, r.Verdict, r.Did, want)
		}
	}
}

// TestGoSDKStdio: the Go SDK v1.8.0 client under each probe over stdio,
// on a fresh recording of its own; the verdicts of goSDKStdioCases.
func TestGoSDKStdio(t *testing.T) {
	recs := map[string][]*store.Recording{}
	for _, tc := range goSDKStdioCases {
		t.Run(tc.kind.String()+"/"+tc.version, func(t *testing.T) {
			if recs[tc.version] == nil {
				recs[tc.version] = recordStdio(t, tc.version)
			}
			res, report := replayStdio(t, recs[tc.version], []Kind{tc.kind}, func(r io.ReadCloser, w io.WriteCloser) {
				goSDKStdio(t.Context(), t, r, w, tc.version)
			})
			if r := one(t, res, report); r.Verdict != tc.want {
				t.Errorf("the Go SDK client over stdio: %s (%s); want %s as docs/probes.md says", r.Verdict, r.Did, tc.want)
			}
		})
	}
}

// TestStdio_UnknownResultType: over stdio in 2026-07-28, a raw client
// that follows the nextCursor of an answer with an unknown resultType
// fails; one that lists again without it passes.
func TestStdio_UnknownResultType(t *testing.T) {
	recs := recordStdio(t, modern)
	for _, keep := range []bool{false, true} {
		res, report := replayStdio(t, recs, []Kind{UnknownResultType}, func(r io.ReadCloser, w io.WriteCloser) {
			l := newLines(t, r, w, recs)
			m := l.send("tools/list", nil, nil)
			if typ, _ := member(m["result"], "resultType"); string(typ) != `"`+unknownType+`"` {
				t.Errorf("the probed page %s has resultType %s; want %q", m["result"], typ, unknownType)
			}
			if keep {
				l.send("tools/list", nil, nil)
			} else {
				l.send("tools/list", cursorEdit(typeCursor), nil)
			}
			l.send("tools/call", nil, nil)
		})
		r := one(t, res, report)
		if want := map[bool]Verdict{false: VerdictFail, true: VerdictPass}[keep]; r.Verdict != want {
			t.Errorf("keep=%v: verdict %s (%s); want %s", keep, r.Verdict, r.Did, want)
		}
	}
}
