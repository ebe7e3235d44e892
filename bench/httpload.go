package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// newClient returns an HTTP client that keeps up to 64 connections per
// host alive and never asks for compression, as an MCP client would.
func newClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = 64
	t.DisableCompression = true
	return &http.Client{Transport: t}
}

// runHTTP sends n tools/call requests of tool to url from conc workers,
// with ids 1 to n, and times each. SSE answers must hold streamEvents
// events and JSON answers the request's id; anything else fails the run.
func runHTTP(ctx context.Context, c *http.Client, url, tool string, n, conc int) (run, error) {
	return runHTTPLoss(ctx, c, url, tool, n, conc, false)
}

// runHTTPLossy is runHTTP for a proxy that may cut answers: a request
// that fails, or whose answer misses events, counts its missing frames
// in the run's lost and the request in cut instead of failing the run.
// Its latency is the time until it failed.
func runHTTPLossy(ctx context.Context, c *http.Client, url, tool string, n, conc int) (run, error) {
	return runHTTPLoss(ctx, c, url, tool, n, conc, true)
}

func runHTTPLoss(ctx context.Context, c *http.Client, url, tool string, n, conc int, lossy bool) (run, error) {
	lat := make([]time.Duration, n)
	var ttfe []time.Duration
	if tool == toolStream {
		ttfe = make([]time.Duration, n)
	}
	var next, frames, lost, cut atomic.Int64
	var wg sync.WaitGroup
	errc := make(chan error, conc)
	start := time.Now()
	for range conc {
		wg.Go(func() {
			for {
				i := next.Add(1)
				if i > int64(n) || ctx.Err() != nil {
					return
				}
				got, first, d, err := post(ctx, c, url, i, tool)
				if err != nil && lossy && ctx.Err() == nil {
					want := 1
					if tool == toolStream {
						want = streamEvents
					}
					lost.Add(int64(max(0, want-got)))
					cut.Add(1)
				} else if err != nil {
					errc <- fmt.Errorf("request %d: %w", i, err)
					return
				}
				lat[i-1] = d
				if ttfe != nil {
					ttfe[i-1] = first
				}
				frames.Add(int64(got))
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	select {
	case err := <-errc:
		return run{}, err
	default:
	}
	if err := ctx.Err(); err != nil {
		return run{}, err
	}
	return run{lat: lat, ttfe: ttfe, requests: n, frames: int(frames.Load()), wall: wall, lost: int(lost.Load()), cut: int(cut.Load())}, nil
}

// post sends one request and reads its whole answer. It returns the
// server frames received (1 for JSON, the events for SSE), the time to
// the first event, and the latency; on an error, the events received and
// the time until then.
func post(ctx context.Context, c *http.Client, url string, id int64, tool string) (frames int, first, lat time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(request(id, tool)))
	if err != nil {
		return 0, 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	t0 := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return 0, 0, 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return 0, 0, 0, fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	if tool != toolStream {
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			return 0, 0, 0, err
		}
		lat = time.Since(t0)
		if !bytes.Contains(body, []byte(`"id":`+strconv.FormatInt(id, 10)+`,`)) {
			return 0, 0, 0, fmt.Errorf("answer without id %d: %.80s", id, body)
		}
		return 1, 0, lat, nil
	}
	events, first, err := countEvents(resp.Body, t0)
	lat = time.Since(t0)
	if err != nil {
		return events, first, lat, err
	}
	if events != streamEvents {
		return events, first, lat, fmt.Errorf("got %d events; want %d", events, streamEvents)
	}
	return events, first, lat, nil
}

// countEvents reads an event stream to its end and counts its events,
// which end with a blank line ("\n\n": the peer writes no CRs). It
// returns the time from t0 to the end of the first event.
func countEvents(r io.Reader, t0 time.Time) (n int, first time.Duration, err error) {
	buf := make([]byte, 32<<10)
	var last byte
	for {
		k, rerr := r.Read(buf)
		for _, b := range buf[:k] {
			if b == '\n' && last == '\n' {
				n++
				if n == 1 {
					first = time.Since(t0)
				}
				b = 0 // a third newline starts no new event
			}
			last = b
		}
		if errors.Is(rerr, io.EOF) {
			return n, first, nil
		}
		if rerr != nil {
			return n, first, rerr
		}
	}
}
