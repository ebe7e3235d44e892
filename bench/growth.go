package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// Growth: ingest must not slow down as a cassette grows. The big cassette
// is generated with SQL straight into the file, which takes seconds where
// proxying a gigabyte would take minutes; its rows look like recorded
// ones (sessions of 10,000 frames, streams of 100 SSE events of about
// 200 B), so its tables and indexes have the shape and size a long
// recording gives them. This is the one place outside store that writes
// SQL, and only to make a test fixture.

const (
	growthFramesPerSession = 10000
	growthFramesPerStream  = 100
	growthEventSize        = 200 // bytes of raw per generated frame
)

// growthResult is what growth measured.
type growthResult struct {
	bigMB       float64 // size of the big cassette before the runs
	bigFrames   int64
	empty, big  float64 // frames/s appended into a new and into the big cassette
	bytesPerRaw float64 // cassette bytes per byte of frames, for the new cassettes
}

// growth fills a cassette in dir with about mb MB of frames, then appends
// n frames of size bytes into it and into new cassettes, alternately,
// rounds times each, and returns the medians.
func growth(ctx context.Context, dir string, mb, size, n, rounds int, log io.Writer) (growthResult, error) {
	var res growthResult
	big := filepath.Join(dir, "growth-big.db")
	defer removeCassette(big)
	frames := int64(mb) << 20 / growthEventSize
	frames -= frames % growthFramesPerSession
	fmt.Fprintf(log, "store growth: generating a cassette of %d frames\n", frames)
	start := time.Now()
	if err := fillCassette(ctx, big, frames); err != nil {
		return res, fmt.Errorf("generate a %d MB cassette: %w", mb, err)
	}
	fi, err := os.Stat(big)
	if err != nil {
		return res, err
	}
	res.bigMB, res.bigFrames = float64(fi.Size())/(1<<20), frames
	fmt.Fprintf(log, "store growth: %.0f MB in %v\n", res.bigMB, time.Since(start).Round(time.Second))

	var empties, bigs, ratios []float64
	for i := range rounds {
		fmt.Fprintf(log, "store growth: round %d\n", i+1)
		path := filepath.Join(dir, "growth-empty.db")
		x, err := ingestInto(ctx, path, size, n)
		if err != nil {
			removeCassette(path)
			return res, err
		}
		fi, err := os.Stat(path)
		removeCassette(path)
		if err != nil {
			return res, err
		}
		empties = append(empties, x)
		ratios = append(ratios, float64(fi.Size())/float64(n*size))
		y, err := ingestInto(ctx, big, size, n)
		if err != nil {
			return res, err
		}
		bigs = append(bigs, y)
	}
	res.empty, res.big, res.bytesPerRaw = medianF(empties), medianF(bigs), medianF(ratios)
	return res, nil
}

// fillCassette creates a cassette at path holding frames generated frames.
func fillCassette(ctx context.Context, path string, frames int64) error {
	d, err := store.Open(ctx, path) // the schema, as this build writes it
	if err != nil {
		return err
	}
	if err := d.Close(); err != nil {
		return err
	}
	db, err := sql.Open("sqlite3", path+"?_journal_mode=WAL&_sync=OFF&_cache_size=-65536")
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	sessions := frames / growthFramesPerSession
	streams := frames / growthFramesPerStream
	// The data: a progress notification padded to growthEventSize bytes
	// of raw event.
	const head = `'event: message' || char(10) || 'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":' || i || ',"progress":'`
	pad := strings.Repeat("x", growthEventSize)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
			INSERT INTO sessions (id, name, transport, revision, era, upstream, started_at, ended_at, exit_code)
			SELECT i, 'filler', 'http', '2025-11-25', 'legacy', 'http://127.0.0.1/mcp', '2026-01-01T00:00:00Z', '2026-01-01T00:10:00Z', 0 FROM s`,
			[]any{sessions}},
		{`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
			INSERT INTO streams (id, session_id, kind, method, url, status, opened_ns, closed_ns, end_kind, request_header, response_header)
			SELECT i, (i - 1) / ? + 1, 'post', 'POST', '/mcp', 200, i * 1000, i * 1000 + 999, 'complete',
				'{"Accept":["application/json, text/event-stream"],"Content-Type":["application/json"]}',
				'{"Content-Type":["text/event-stream"]}' FROM s`,
			[]any{streams, growthFramesPerSession / growthFramesPerStream}},
		{`WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?)
			INSERT INTO frames (session_id, seq, stream_id, direction, offset_ns, kind, method, sse, sse_event, raw)
			SELECT (i - 1) / ? + 1, (i - 1) % ? + 1, (i - 1) / ? + 1, 's2c', i * 10, 'notification',
				'notifications/progress', 1, 'message',
				CAST(substr(` + head + ` || i || ',"message":"' || ?, 1, ? - 5) || '"}}' || char(10) || char(10) AS BLOB) FROM s`,
			[]any{frames, growthFramesPerSession, growthFramesPerSession, growthFramesPerStream, pad, growthEventSize}},
	} {
		if _, err := tx.ExecContext(ctx, q.sql, q.args...); err != nil {
			return err
		}
	}
	return tx.Commit()
}
