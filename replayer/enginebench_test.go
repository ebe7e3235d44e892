package replayer

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/internal/storetest"
)

// BenchmarkNewEngine measures what a live session's engine costs: a
// sessionless HTTP client gets one per POST. go test -bench NewEngine
// -benchmem ./replayer
func BenchmarkNewEngine(b *testing.B) {
	db, ids := storetest.Import(b, manySessions(1))
	recs, err := load(context.Background(), db, ids...)
	if err != nil {
		b.Fatal(err)
	}
	rec := recs[0]
	rec.template(Match{}) // built once, as the first live session does
	b.ReportAllocs()
	for b.Loop() {
		newEngine(rec, Match{})
	}
}

// longSession is a JSONL cassette of one stdio session of calls
// tools/call requests, each answered after notes notifications: a long
// recording of one busy session, as make bench's replay rows serve.
func longSession(calls, notes int) string {
	var b strings.Builder
	b.WriteString(`{"type":"mcpvcr","version":1}` + "\n")
	b.WriteString(`{"type":"session","id":1,"transport":"stdio","revision":"2025-11-25","era":"legacy","started_at":"2026-01-01T00:00:00Z","ended_at":"2026-01-01T00:00:01Z","exit_code":0}` + "\n")
	b.WriteString(`{"type":"stream","id":1,"session":1,"kind":"stdin","end":"complete","closed_ns":100}` + "\n")
	b.WriteString(`{"type":"stream","id":2,"session":1,"kind":"stdout","end":"complete","closed_ns":100}` + "\n")
	seq := 0
	frame := func(stream int, dir, raw string) {
		seq++
		line, _ := json.Marshal(map[string]any{"type": "frame", "session": 1, "seq": seq, "stream": stream, "dir": dir, "offset_ns": seq, "raw": raw + "\n"})
		b.Write(line)
		b.WriteByte('\n')
	}
	frame(1, "c2s", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","clientInfo":{"name":"rec","version":"1.0"}}}`)
	frame(2, "s2c", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","serverInfo":{"name":"s","version":"1"}}}`)
	frame(1, "c2s", `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for c := 1; c <= calls; c++ {
		frame(1, "c2s", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"t"}}}`, c))
		for range notes {
			frame(2, "s2c", `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`+strings.Repeat("y", 120)+`"}}`)
		}
		frame(2, "s2c", fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":"t"}]}}`, c))
	}
	return b.String()
}

// BenchmarkTemplate measures what the live sessions of a long recording
// cost: loading the session's frames and building its template (every
// frame parsed and linked), for the first; an engine over the template,
// for each. go test -bench Template -benchmem ./replayer
func BenchmarkTemplate(b *testing.B) {
	db, ids := storetest.Import(b, longSession(600, 99))
	b.Run("load", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := load(context.Background(), db, ids...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("build", func(b *testing.B) {
		recs, err := load(context.Background(), db, ids...)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			script.Build(recs[0].Recording, Match{})
		}
	})
	b.Run("engine", func(b *testing.B) {
		// What every further live session of it costs (a sessionless
		// client gets one per POST).
		recs, err := load(context.Background(), db, ids...)
		if err != nil {
			b.Fatal(err)
		}
		recs[0].template(Match{})
		b.ReportAllocs()
		for b.Loop() {
			newEngine(recs[0], Match{})
		}
	})
}
