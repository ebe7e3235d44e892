package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// runStdio sends n tools/call requests of tool, with ids 1 to n, on w
// from conc workers (each waits for its answer before sending again, so
// up to conc are in flight), reads the server's lines from r, and times
// each request from its write to its answer's arrival.
func runStdio(ctx context.Context, w io.Writer, r io.Reader, tool string, n, conc int) (run, error) {
	done := make([]chan struct{}, n)
	for i := range done {
		done[i] = make(chan struct{})
	}
	lat := make([]time.Duration, n)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		lines int
		err   error
	}
	read := make(chan result, 1)
	go func() {
		k, err := readAnswers(r, done)
		if err != nil {
			cancel() // unblock the workers
		}
		read <- result{k, err}
	}()

	var wmu sync.Mutex // guards w: a request is one write
	var next atomic.Int64
	var wg sync.WaitGroup
	werr := make(chan error, conc)
	start := time.Now()
	for range conc {
		wg.Go(func() {
			buf := make([]byte, 0, 128)
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				buf = append(append(buf[:0], request(i, tool)...), '\n')
				t0 := time.Now()
				wmu.Lock()
				_, err := w.Write(buf)
				wmu.Unlock()
				if err != nil {
					werr <- fmt.Errorf("write request %d: %w", i, err)
					return
				}
				select {
				case <-done[i-1]:
				case <-ctx.Done():
					werr <- fmt.Errorf("request %d: %w", i, ctx.Err())
					return
				}
				lat[i-1] = time.Since(t0)
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	select {
	case err := <-werr:
		// If the reader failed first, its error says why. Otherwise it
		// ends at the end of r, which the caller's cleanup brings about.
		select {
		case res := <-read:
			if res.err != nil {
				return run{}, res.err
			}
		default:
		}
		return run{}, err
	default:
	}
	res := <-read
	if res.err != nil {
		return run{}, res.err
	}
	return run{lat: lat, requests: n, frames: res.lines, wall: wall}, nil
}

// readAnswers reads lines from r until every request has its answer,
// closing done[id-1] as the answer to id arrives. It returns the lines
// read.
func readAnswers(r io.Reader, done []chan struct{}) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	lines, left := 0, len(done)
	for left > 0 {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return lines, errors.New("line longer than 64 KB")
		}
		if err != nil {
			return lines, fmt.Errorf("read answers (%d missing): %w", left, err)
		}
		lines++
		id, ok := answerID(line)
		if !ok {
			continue // a notification
		}
		if id < 1 || id > int64(len(done)) {
			return lines, fmt.Errorf("answer to unknown id %d: %.80s", id, line)
		}
		select {
		case <-done[id-1]:
			return lines, fmt.Errorf("second answer to id %d", id)
		default:
		}
		close(done[id-1])
		left--
	}
	return lines, nil
}

// answerID returns the numeric id of a response line; notifications have
// none. It looks only at the top of the line, where the peer (and replay,
// which rewrites the id in place) put the id.
func answerID(line []byte) (int64, bool) {
	const key = `"id":`
	head := line[:min(len(line), 48)]
	i := bytes.Index(head, []byte(key))
	if i < 0 || bytes.Contains(head[:i], []byte(`"method"`)) {
		return 0, false
	}
	rest := line[i+len(key):]
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	id, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	return id, err == nil
}
