package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"time"
)

// Frames of a generated stdio session: the opening every session shares,
// then calls that differ per session.
const (
	// genFrames is how many frames each generated session holds.
	genFrames = 64
	// genInitialize is the initialize request every generated session opens
	// with; the replay start measurement sends it.
	genInitialize  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"roots":{"listChanged":true}},"clientInfo":{"name":"bench-client","version":"1.0.0"}}}`
	genInitResult  = `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"bench-server","version":"1.0.0"}}}`
	genInitialized = `{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`
	genToolsList   = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	genToolsResult = `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo","description":"Echoes its text.","inputSchema":{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}}]}}`
)

// genFrame is one frame of a generated session.
type genFrame struct {
	c2s bool
	raw string
}

// genSession returns the frames of generated session s (from 1): the
// shared opening (initialize, its result, notifications/initialized,
// tools/list and its result), then tools/call echo requests whose text
// names the session and the call, each with its result, and a log
// notification if one frame is left.
func genSession(s, frames int) []genFrame {
	fs := []genFrame{{true, genInitialize}, {false, genInitResult}, {true, genInitialized}, {true, genToolsList}, {false, genToolsResult}}
	for id := 3; len(fs)+2 <= frames; id++ {
		text := fmt.Sprintf("session %d call %d", s, id-2)
		fs = append(fs,
			genFrame{true, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, id, text)},
			genFrame{false, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q}]}}`, id, text)})
	}
	if len(fs) < frames {
		fs = append(fs, genFrame{false, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"session %d done"}}`, s)})
	}
	return fs[:min(len(fs), frames)]
}

// genCassette writes, as a JSONL export (what mcpvcr import and replay
// read), a cassette of n stdio sessions of frames frames each, all sharing
// their opening frames (see genSession). The output is deterministic: the
// same n and frames give the same bytes.
func genCassette(w io.Writer, n, frames int) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"type": "mcpvcr", "version": 1}); err != nil {
		return err
	}
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	type session struct {
		Type      string `json:"type"`
		ID        int    `json:"id"`
		Name      string `json:"name"`
		Transport string `json:"transport"`
		Revision  string `json:"revision"`
		Era       string `json:"era"`
		Upstream  string `json:"upstream"`
		StartedAt string `json:"started_at"`
		EndedAt   string `json:"ended_at"`
		ExitCode  int    `json:"exit_code"`
	}
	type stream struct {
		Type     string `json:"type"`
		ID       int    `json:"id"`
		Session  int    `json:"session"`
		Kind     string `json:"kind"`
		OpenedNS int64  `json:"opened_ns"`
		ClosedNS int64  `json:"closed_ns"`
		End      string `json:"end"`
	}
	type frame struct {
		Type     string `json:"type"`
		Session  int    `json:"session"`
		Seq      int    `json:"seq"`
		Stream   int    `json:"stream"`
		Dir      string `json:"dir"`
		OffsetNS int64  `json:"offset_ns"`
		Raw      string `json:"raw"`
	}
	const step = int64(time.Millisecond)
	for s := 1; s <= n; s++ {
		start := epoch.Add(time.Duration(s) * time.Second)
		fs := genSession(s, frames)
		end := int64(len(fs)+1) * step
		recs := []any{
			session{"session", s, fmt.Sprintf("gen-%d", s), "stdio", "2025-11-25", "legacy", "bench-server",
				start.Format(time.RFC3339Nano), start.Add(time.Duration(end)).Format(time.RFC3339Nano), 0},
			stream{"stream", 2*s - 1, s, "stdin", 0, end, "complete"},
			stream{"stream", 2 * s, s, "stdout", 0, end, "complete"},
		}
		for i, f := range fs {
			fr := frame{Type: "frame", Session: s, Seq: i + 1, Stream: 2 * s, Dir: "s2c", OffsetNS: int64(i+1) * step, Raw: f.raw + "\n"}
			if f.c2s {
				fr.Stream, fr.Dir = 2*s-1, "c2s"
			}
			recs = append(recs, fr)
		}
		for _, r := range recs {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}
