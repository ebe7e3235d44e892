package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// genHTTPCassette writes, as a JSONL export, a cassette of n sessions of
// the frames genSession gives, all sharing their opening frames, recorded
// over Streamable HTTP (sse false: one POST per client frame, each
// request answered with JSON on its own POST, each session with its own
// Mcp-Session-Id) or over the 2024-11-05 HTTP+SSE transport (sse true:
// one GET /sse stream announcing the session's endpoint and carrying
// every answer, one POST per client frame, each answered 202). The
// server's log notification, if any, goes on the GET stream (HTTP+SSE)
// or is left out (Streamable HTTP, which has no standalone stream here).
// kind "http modern" records the sessions as 2026-07-28 exchanges (no
// session id; replay answers each request from every session at once);
// "http refused" adds, for every tenth session, a session without a
// session id whose initialize the server refused 403 for a foreign
// Origin and Host. The output is deterministic.
func genHTTPCassette(w io.Writer, n, frames int, kind string) error {
	sse, modern := kind == "sse", kind == "http modern"
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"type": "mcpvcr", "version": 1}); err != nil {
		return err
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const step = int64(time.Millisecond)
	transport, revision, era := "http", "2025-11-25", "legacy"
	if sse {
		transport, revision = "sse", "2024-11-05"
	}
	if modern {
		revision, era = "2026-07-28", "modern"
	}
	streamID := 0
	for s := 1; s <= n; s++ {
		start := epoch.Add(time.Duration(s) * time.Second)
		fs := genSession(s, frames)
		end := int64(2*len(fs)+2) * step
		sid := fmt.Sprintf("GEN%06d", s)
		sess := map[string]any{"type": "session", "id": s, "name": fmt.Sprintf("gen-%s-%d", transport, s), "transport": transport,
			"revision": revision, "era": era, "upstream": "http://127.0.0.1:3001/mcp",
			"started_at": start.Format(time.RFC3339Nano), "ended_at": start.Add(time.Duration(end)).Format(time.RFC3339Nano), "exit_code": -1}
		if !sse && !modern {
			sess["external_id"] = sid
		}
		recs := []any{sess}
		var frameRecs []any
		seq := 0
		frame := func(stream int, c2s bool, at int64, raw string, event bool) {
			seq++
			fr := map[string]any{"type": "frame", "session": s, "seq": seq, "stream": stream, "dir": "s2c", "offset_ns": at, "raw": raw}
			if c2s {
				fr["dir"] = "c2s"
			}
			if event {
				fr["sse"], fr["event"], fr["data"] = true, "message", raw
				fr["raw"] = "event: message\ndata: " + raw + "\n\n"
			}
			frameRecs = append(frameRecs, fr)
		}
		get := 0
		endpoint := "/sse?sessionid=" + sid
		if sse {
			streamID++
			get = streamID
			recs = append(recs, map[string]any{"type": "stream", "id": get, "session": s, "kind": "sse", "method": "GET", "url": "/sse",
				"status": 200, "opened_ns": step / 2, "closed_ns": end, "end": "client-aborted",
				"request_header":  http.Header{"Accept": {"text/event-stream"}},
				"response_header": http.Header{"Content-Type": {"text/event-stream"}, "Cache-Control": {"no-cache"}}})
			seq++
			frameRecs = append(frameRecs, map[string]any{"type": "frame", "session": s, "seq": seq, "stream": get, "dir": "s2c", "offset_ns": step,
				"sse": true, "event": "endpoint", "raw": "event: endpoint\ndata: " + endpoint + "\n\n", "data": endpoint})
		}
		at := 2 * step
		for i := 0; i < len(fs); i++ {
			f := fs[i]
			if !f.c2s {
				if sse { // a server frame no request owns: on the GET stream
					frame(get, false, at, f.raw, true)
					at += step
				}
				continue
			}
			streamID++
			st := map[string]any{"type": "stream", "id": streamID, "session": s, "kind": "post", "method": "POST", "url": "/mcp",
				"opened_ns": at, "end": "complete"}
			reqHeader := http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"}}
			respHeader := http.Header{}
			if sse {
				st["url"] = endpoint
				reqHeader = http.Header{"Content-Type": {"application/json"}}
			} else if i > 0 && !modern {
				reqHeader["Mcp-Session-Id"] = []string{sid}
				reqHeader["Mcp-Protocol-Version"] = []string{revision}
			}
			frame(streamID, true, at, f.raw, false)
			at += step
			answered := i+1 < len(fs) && !fs[i+1].c2s && strings.Contains(f.raw, `"id":`)
			switch {
			case sse:
				st["status"] = 202
				if answered {
					frame(get, false, at, fs[i+1].raw, true)
					i++
				}
			case answered:
				st["status"] = 200
				respHeader["Content-Type"] = []string{"application/json"}
				if i == 0 && !modern {
					respHeader["Mcp-Session-Id"] = []string{sid}
				}
				frame(streamID, false, at, fs[i+1].raw, false)
				i++
			default:
				st["status"] = 202
			}
			at += step
			st["closed_ns"] = at
			st["request_header"], st["response_header"] = reqHeader, respHeader
			recs = append(recs, st)
		}
		for _, r := range append(recs, frameRecs...) {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	}
	if kind == "http refused" {
		// Sessions n+1, n+2, …: each an initialize refused for a foreign
		// Origin and Host, with no session id.
		epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for k := 1; k*10 <= n; k++ {
			s := n + k
			start := epoch.Add(time.Duration(s) * time.Second)
			streamID++
			for _, r := range []any{
				map[string]any{"type": "session", "id": s, "name": fmt.Sprintf("gen-refused-%d", k), "transport": "http", "revision": revision,
					"era": "legacy", "upstream": "http://127.0.0.1:3001/mcp", "started_at": start.Format(time.RFC3339Nano),
					"ended_at": start.Add(4 * time.Millisecond).Format(time.RFC3339Nano), "exit_code": -1},
				map[string]any{"type": "stream", "id": streamID, "session": s, "kind": "post", "method": "POST", "url": "/mcp",
					"status": 403, "opened_ns": step, "closed_ns": 3 * step, "end": "complete",
					"request_header": http.Header{"Accept": {"application/json, text/event-stream"}, "Content-Type": {"application/json"},
						"Origin": {"http://evil.example"}, "Host": {"evil.example"}},
					"response_header": http.Header{"Content-Type": {"text/plain; charset=utf-8"}}},
				map[string]any{"type": "frame", "session": s, "seq": 1, "stream": streamID, "dir": "c2s", "offset_ns": step, "raw": genInitialize},
				map[string]any{"type": "frame", "session": s, "seq": 2, "stream": streamID, "dir": "s2c", "offset_ns": 2 * step, "raw": "Forbidden: invalid Origin\n"},
			} {
				if err := enc.Encode(r); err != nil {
					return err
				}
			}
		}
	}
	return bw.Flush()
}
