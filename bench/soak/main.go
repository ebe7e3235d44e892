// Command soak measures whether a long-running mcpvcr replay stays flat:
// it starts `mcpvcr replay --listen` on a cassette and has -clients
// clients replay one recorded Streamable HTTP session against it over
// and over (initialize, every recorded POST, then DELETE unless
// -delete=false) for -duration, sampling the replay process's resident
// memory every -every. It prints the samples and, last, the RSS after
// the first sample and at the end: a replay that keeps state per served
// session or event grows between the two.
//
//	go run ./bench/soak -bin bin/mcpvcr -duration 60s
//
// make soak runs it. It needs no peer: the clients send the recorded
// client frames themselves.
//
// With -mode record it measures mcpvcr record the same way instead (see
// record.go): make soak SOAKMODE=record.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

func main() {
	bin := flag.String("bin", "bin/mcpvcr", "the mcpvcr binary")
	cassette := flag.String("cassette", "cassettes/multi-gosdk-http-sse.jsonl", "a cassette with a Streamable HTTP session")
	session := flag.Int64("session", 1, "the recorded session the clients replay")
	clients := flag.Int("clients", 16, "clients at once")
	duration := flag.Duration("duration", time.Minute, "how long the load lasts")
	every := flag.Duration("every", 5*time.Second, "how often RSS is sampled")
	del := flag.Bool("delete", true, "end each session with the recorded DELETE")
	mode := flag.String("mode", "replay", "the command measured: replay or record")
	events := flag.Int("events", 20, "record: the progress events of each session's SSE answer")
	flag.Parse()
	var err error
	switch *mode {
	case "replay":
		err = run(*bin, *cassette, *session, *clients, *duration, *every, *del)
	case "record":
		err = runRecord(*bin, *events, *clients, *duration, *every, *del)
	default:
		err = fmt.Errorf("-mode %q: want replay or record", *mode)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// post is one recorded client POST: its body and the revision header.
type post struct {
	body    []byte
	version string
}

func run(bin, cassette string, session int64, clients int, duration, every time.Duration, del bool) error {
	ctx := context.Background()
	recs, err := store.LoadFile(ctx, cassette, session)
	if err != nil || len(recs) != 1 {
		return fmt.Errorf("load session %d of %s: %v", session, cassette, err)
	}
	var posts []post
	for _, st := range recs[0].Streams {
		if st.Kind != store.PostStream || st.Status >= 400 {
			continue
		}
		for _, f := range recs[0].Frames {
			if f.StreamID == st.ID && f.Direction == store.ClientToServer {
				posts = append(posts, post{body: f.Raw, version: st.RequestHeader.Get("Mcp-Protocol-Version")})
				break
			}
		}
	}
	if len(posts) == 0 {
		return fmt.Errorf("session %d of %s has no POST", session, cassette)
	}
	cmd := exec.Command(bin, "replay", strconv.FormatInt(session, 10), "--cassette", cassette, "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { _ = cmd.Process.Signal(os.Interrupt); _ = cmd.Wait() }()
	url, err := firstMatch(stderr, pointAt)
	if err != nil {
		return err
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()

	stop := time.Now().Add(duration)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	sessions, failures, wait := load(clients, stop, func() error { return oneSession(client, url, posts, del) })
	return sample(cmd.Process.Pid, clients, duration, every, stop, sessions, failures, wait)
}

// runRecord is the soak of mcpvcr record (record.go).
func runRecord(bin string, events, clients int, duration, every time.Duration, del bool) error {
	cmd, url, end, err := recordTarget(bin, events)
	if err != nil {
		return err
	}
	defer end()
	stop := time.Now().Add(duration)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
	sessions, failures, wait := load(clients, stop, func() error { return recordSession(client, url, del) })
	return sample(cmd.Process.Pid, clients, duration, every, stop, sessions, failures, wait)
}

// sample prints process pid's RSS every every until stop, then waits for
// the load and sums it up.
func sample(pid, clients int, duration, every time.Duration, stop time.Time, sessions, failures *atomic.Int64, wait func()) error {
	start := time.Now()
	var first, last int64
	fmt.Printf("%8s %10s %10s\n", "t", "RSS MB", "sessions")
	for t := range time.Tick(every) {
		rss, err := vmRSS(pid)
		if err != nil {
			return err
		}
		if first == 0 {
			first = rss
		}
		last = rss
		fmt.Printf("%8s %10.1f %10d\n", t.Sub(start).Round(time.Second), float64(rss)/1024, sessions.Load())
		if t.After(stop) {
			break
		}
	}
	wait()
	fmt.Printf("soak: %d clients, %d sessions served (%d failed) in %s; RSS %.1f MB at the first sample, %.1f MB at the end (%+.1f MB)\n",
		clients, sessions.Load(), failures.Load(), duration, float64(first)/1024, float64(last)/1024, float64(last-first)/1024)
	if failures.Load() > 0 {
		return fmt.Errorf("%d sessions failed", failures.Load())
	}
	return nil
}

// oneSession replays the recorded POSTs, reading every answer to its end,
// then the DELETE.
func oneSession(c *http.Client, url string, posts []post, del bool) error {
	sid := ""
	for _, p := range posts {
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(p.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			if p.version != "" {
				req.Header.Set("Mcp-Protocol-Version", p.version)
			}
		}
		resp, err := c.Do(req)
		if err != nil {
			return err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return fmt.Errorf("POST answered %d", resp.StatusCode)
		}
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			sid = s
		}
	}
	if !del || sid == "" {
		return nil
	}
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

var pointAt = regexp.MustCompile(`point your client at (http://\S+?);`)

// firstMatch reads a command's stderr up to the line naming its URL,
// which re's first group matches.
func firstMatch(r io.Reader, re *regexp.Regexp) (string, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			return m[1], nil
		}
	}
	return "", fmt.Errorf("the command exited before it listened")
}

// vmRSS returns the resident memory of process pid in KiB.
func vmRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			return strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
		}
	}
	return 0, fmt.Errorf("no VmRSS for process %d", pid)
}
