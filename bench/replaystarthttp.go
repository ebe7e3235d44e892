package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// httpStartSessions are the cassette sizes of the HTTP and HTTP+SSE
// replay start rows; quickHTTPStartSessions with -quick.
var (
	httpStartSessions      = []int{100, 5000}
	quickHTTPStartSessions = []int{100, 1000}
)

// httpGenFrames is how many frames (before the mapping onto HTTP
// streams) each generated HTTP session holds: the shared opening and
// three calls of its own, about as long as a recorded SDK session.
const httpGenFrames = 12

// httpStartInitialize is the initialize the HTTP start runs send: the
// generated sessions' own, from a client with another clientInfo (replay
// ignores it).
var httpStartInitialize = strings.Replace(genInitialize, `"name":"bench-client","version":"1.0.0"`, `"name":"other-client","version":"9.9.9"`, 1)

// genHTTPDB writes a generated cassette of n sessions of kind (see
// genHTTPCassette) into a new SQLite cassette at path.
func genHTTPDB(ctx context.Context, path string, n int, kind string) error {
	db, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(genHTTPCassette(pw, n, httpGenFrames, kind)) }()
	_, err = db.Import(ctx, pr)
	pr.CloseWithError(errors.New("import stopped"))
	return errors.Join(err, db.Close())
}

// replayStartHTTP measures mcpvcr replay --listen, without SESSION, of a
// generated cassette of n sessions of kind (see genHTTPCassette): one
// untimed run (which may build what the cassette lacks), then rounds
// runs, each a new process answering one initialize.
func replayStartHTTP(ctx context.Context, bin, dir string, n, rounds int, kind string, log io.Writer) (startResult, error) {
	sse := kind == "sse"
	res := startResult{sessions: n, transport: kind}
	path := filepath.Join(dir, fmt.Sprintf("start-%s-%d.db", strings.ReplaceAll(kind, " ", "-"), n))
	defer removeCassette(path)
	fmt.Fprintf(log, "replay start %s: generating a cassette of %d sessions of %d frames\n", kind, n, httpGenFrames)
	if err := genHTTPDB(ctx, path, n, kind); err != nil {
		return res, fmt.Errorf("generate %d %s sessions: %w", n, kind, err)
	}
	var listens, firsts []time.Duration
	var peaks []int64
	for i := range rounds + 1 {
		fmt.Fprintf(log, "replay start %s: %d sessions, round %d\n", kind, n, i)
		listen, first, peak, err := startRunHTTP(ctx, bin, path, sse)
		if err != nil {
			return res, fmt.Errorf("%d %s sessions: %w", n, kind, err)
		}
		if i > 0 {
			listens, firsts, peaks = append(listens, listen), append(firsts, first), append(peaks, peak)
		}
	}
	slices.Sort(listens)
	slices.Sort(firsts)
	slices.Sort(peaks)
	res.listen, res.first, res.peak = listens[len(listens)/2], firsts[len(firsts)/2], peaks[len(peaks)/2]
	return res, nil
}

// startRunHTTP starts mcpvcr replay --listen 127.0.0.1:0 on cassette,
// waits for it to say where it listens, and initializes one client:
// Streamable HTTP (a POST answered with JSON) or, with sse, HTTP+SSE (a
// GET /sse, then a POST to the endpoint it announces, answered on the
// GET stream). It returns the times from starting the process to the
// listening line and to the answer, and the peak RSS at the answer. The
// answer must be the recorded one.
func startRunHTTP(ctx context.Context, bin, cassette string, sse bool) (listen, first time.Duration, peak int64, err error) {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "replay", "--listen", "127.0.0.1:0", "--cassette", cassette)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 0, 0, 0, err
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, 0, 0, err
	}
	defer func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()
	// The stderr lines, all of them, for errors; the first says where
	// replay listens.
	var log bytes.Buffer
	lines := bufio.NewScanner(stderr)
	base := ""
	for base == "" && lines.Scan() {
		l := lines.Text()
		log.WriteString(l + "\n")
		if _, rest, ok := strings.Cut(l, " on http://"); ok {
			addr, _, _ := strings.Cut(rest, ";")
			base = "http://" + addr
		}
	}
	if base == "" {
		return 0, 0, 0, fmt.Errorf("mcpvcr replay never said where it listens:\n%s", log.String())
	}
	listen = time.Since(start)
	rest := make(chan struct{})
	go func() { // drain stderr, so that replay never blocks on it
		defer close(rest)
		for lines.Scan() {
			log.WriteString(lines.Text() + "\n")
		}
	}()
	var got string
	if sse {
		got, err = initializeSSE(ctx, base)
	} else {
		got, err = initializeHTTP(ctx, base)
	}
	first = time.Since(start)
	if err == nil && got != genInitResult {
		err = fmt.Errorf("answer to initialize = %s; want the recorded %s", got, genInitResult)
	}
	if err == nil {
		peak, err = procStatus(cmd.Process.Pid, "VmHWM")
	}
	_ = cmd.Process.Signal(os.Interrupt)
	werr := cmd.Wait()
	<-rest
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%w\n%s", err, log.String())
	}
	if werr != nil {
		return 0, 0, 0, fmt.Errorf("mcpvcr replay: %w\n%s", werr, log.String())
	}
	return listen, first, peak, nil
}

// initializeHTTP posts the initialize to base's /mcp and returns the
// JSON answer.
func initializeHTTP(ctx context.Context, base string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(httpStartInitialize))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("post initialize: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("post initialize: %s %s %v", resp.Status, b, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// initializeSSE opens base's /sse stream, posts the initialize to the
// endpoint it announces and returns the answer that comes on the stream.
func initializeSSE(ctx context.Context, base string) (string, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the GET stream
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/sse", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("get /sse: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("get /sse: %s", resp.Status)
	}
	events := bufio.NewScanner(resp.Body)
	next := func(event string) (string, error) {
		cur := ""
		for events.Scan() {
			l := events.Text()
			if v, ok := strings.CutPrefix(l, "event: "); ok {
				cur = v
			}
			if v, ok := strings.CutPrefix(l, "data: "); ok && cur == event {
				return v, nil
			}
		}
		return "", fmt.Errorf("get /sse: the stream ended before a %s event: %v", event, events.Err())
	}
	endpoint, err := next("endpoint")
	if err != nil {
		return "", err
	}
	post, err := http.NewRequestWithContext(ctx, http.MethodPost, base+endpoint, strings.NewReader(httpStartInitialize))
	if err != nil {
		return "", err
	}
	post.Header.Set("Content-Type", "application/json")
	presp, err := http.DefaultClient.Do(post)
	if err != nil {
		return "", fmt.Errorf("post initialize: %w", err)
	}
	_, _ = io.Copy(io.Discard, presp.Body)
	presp.Body.Close()
	if presp.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("post initialize: %s", presp.Status)
	}
	return next("message")
}
