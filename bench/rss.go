package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// bigStream is an MCP-shaped server whose every POST is answered with one
// long SSE stream: notifications of about eventSize bytes, flushed one by
// one, adding up to total bytes, then the result.
type bigStream struct {
	total     int64
	eventSize int
}

// events returns the number of notifications in the stream.
func (s bigStream) events() int64 { return max(1, s.total/int64(s.eventSize)) }

func (s bigStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	m := jsonrpc.Parse(body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	ev := append(append([]byte("data: "), bytes.TrimSuffix(notification(s.eventSize-8), []byte("\n"))...), "\n\n"...)
	for range s.events() {
		if _, err := w.Write(ev); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
	}
	_, _ = fmt.Fprintf(w, "data: %s\n\n", streamResult(m.ID))
}

// rssTimeout bounds one peak-memory run: a 1 GB stream through the
// recorder takes about a minute on two cores.
const rssTimeout = 10 * time.Minute

// rssResult is what one peak-memory run measured.
type rssResult struct {
	mode        string
	bytes       int64         // forwarded
	events      int64         // received by the client
	recorded    int64         // frames in the cassette, record only
	base, peak  int64         // the proxy's RSS before the stream, and its peak (VmHWM)
	wall        time.Duration // the stream's duration at the client
	checkReport string
}

// rssRun forwards one SSE stream of about total bytes through a proxy
// child process in mode "record" (recorder.HTTP into a cassette in dir)
// or "pass" (the passthrough proxy), and reads the child's peak RSS from
// /proc once the child has forwarded the stream and closed its cassette.
func rssRun(ctx context.Context, self, dir, mode string, total int64, eventSize int) (rssResult, error) {
	res := rssResult{mode: mode}
	ctx, cancel := context.WithTimeout(ctx, rssTimeout)
	defer cancel()
	up := bigStream{total: total, eventSize: eventSize}
	peer, err := serve(up)
	if err != nil {
		return res, err
	}
	defer peer.close(ctx)
	cassette := filepath.Join(dir, "rss.db")
	defer removeCassette(cassette)

	ch, err := startChild(ctx, self, "http-"+mode, "-upstream", peer.url, "-cassette", cassette)
	if err != nil {
		return res, err
	}
	defer ch.kill() // on the way out early; a no-op once it has exited
	if res.base, err = procStatus(ch.cmd.Process.Pid, "VmRSS"); err != nil {
		return res, err
	}
	proxyURL := ch.url

	c := newClient()
	defer c.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, proxyURL, bytes.NewReader(request(1, toolStream)))
	if err != nil {
		return res, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return res, err
	}
	cr := &countingReader{r: resp.Body}
	n, _, err := countEvents(cr, start)
	resp.Body.Close()
	res.wall, res.events, res.bytes = time.Since(start), int64(n), cr.n
	if err != nil {
		return res, err
	}
	if want := up.events() + 1; res.events != want {
		return res, fmt.Errorf("client got %d events; want %d", res.events, want)
	}

	if err := ch.stop(); err != nil {
		return res, err
	}
	if res.peak, err = procStatus(ch.cmd.Process.Pid, "VmHWM"); err != nil {
		return res, err
	}
	if err := ch.wait(); err != nil {
		return res, err
	}
	if mode != "record" {
		return res, nil
	}
	db, err := store.Open(ctx, cassette)
	if err != nil {
		return res, err
	}
	defer db.Close()
	rep, err := db.Check(ctx)
	if err != nil {
		return res, err
	}
	res.recorded, res.checkReport = rep.Frames, rep.String()
	if want := res.events + 1; res.recorded != want || !rep.OK() {
		return res, fmt.Errorf("cassette: %s; want %d frames", rep, want)
	}
	return res, nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// procStatus returns a "kB" field of /proc/<pid>/status in bytes.
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read peak memory (Linux /proc only): %w", err)
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no %s in /proc/%d/status", field, pid)
}
