package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcptest"
	"github.com/mcpvcr/mcpvcr/internal/sse"
)

// floodPackage is the stdio server that sends numbered notifications.
const floodPackage = "github.com/mcpvcr/mcpvcr/internal/mcptest/flood"

// goBuild builds pkg into a temporary directory and returns the binary.
func goBuild(tb testing.TB, pkg string, flags ...string) string {
	tb.Helper()
	bin := filepath.Join(tb.TempDir(), filepath.Base(pkg))
	args := append(append([]string{"build"}, flags...), "-o", bin, pkg)
	if out, err := exec.Command("go", args...).CombinedOutput(); err != nil {
		tb.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

// floodLine is what the flood server puts in each line.
type floodLine struct {
	Params struct {
		Data struct {
			N int `json:"n"`
		} `json:"data"`
	} `json:"params"`
}

// lineNumber returns the n of a flood line, 0 if it has none.
func lineNumber(raw []byte) int {
	var l floodLine
	_ = json.Unmarshal(raw, &l)
	return l.Params.Data.N
}

// countLines reads flood lines from r until EOF, checking that they are
// numbered 1, 2, 3, ..., and sends the count so far on progress (without
// blocking) and the final count on done.
func countLines(r io.Reader, progress chan<- int, done chan<- int, errc chan<- error) {
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			if got := lineNumber(line); got != n+1 {
				errc <- fmt.Errorf("client line %d has n=%d; want a gap-free sequence", n+1, got)
				_, _ = io.Copy(io.Discard, br)
				done <- n
				return
			}
			n++
			select {
			case progress <- n:
			default:
			}
		}
		if err != nil {
			done <- n
			return
		}
	}
}

// recordedNumbers exports the cassette and returns the n of each frame of
// the server's stdout, in seq order.
func recordedNumbers(tb testing.TB, db string) []int {
	tb.Helper()
	r := mcpvcr(tb, "", "export", "--cassette", db)
	if r.code != 0 {
		tb.Fatalf("mcpvcr export = %d; stderr:\n%s", r.code, r.stderr)
	}
	stdout := int64(0)
	var ns []int
	for line := range strings.Lines(r.stdout) {
		var rec struct {
			Type, Kind, Dir, Raw string
			ID, Stream           int64
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			tb.Fatalf("export line %q: %v", line, err)
		}
		switch {
		case rec.Type == "stream" && rec.Kind == "stdout":
			stdout = rec.ID
		case rec.Type == "frame" && rec.Stream == stdout && rec.Dir == "s2c":
			ns = append(ns, lineNumber([]byte(rec.Raw)))
		}
	}
	return ns
}

// checkPrefix fails tb unless ns is 1, 2, ..., len(ns).
func checkPrefix(tb testing.TB, ns []int) {
	tb.Helper()
	for i, n := range ns {
		if n != i+1 {
			tb.Fatalf("recorded frame %d of stdout has n=%d; want a gap-free prefix 1..%d", i+1, n, len(ns))
		}
	}
}

// TestReliability_KillNine kills mcpvcr record with SIGKILL while it
// records about 10,000 frames a second. The cassette must pass check and
// hold a gap-free prefix of what the client received; the loss is what the
// store had not committed yet, by design at most its 100 ms commit
// interval (logged, and asserted with room for a loaded machine).
func TestReliability_KillNine(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("records for seconds")
	}
	const rate = 10000
	flood := goBuild(t, floodPackage)
	db := filepath.Join(t.TempDir(), "kill.db")
	cmd := exec.Command(mcpvcrBin, "record", "--cassette", db, "--", flood, "-rate", fmt.Sprint(rate), "-for", "60s")
	stdin, stdout, stderr := startPiped(t, cmd) // stdin held open: a client that keeps listening
	defer stdin.Close()
	t.Cleanup(func() { cmd.Process.Kill() })
	progress, done, errc := make(chan int, 1), make(chan int, 1), make(chan error, 1)
	go countLines(stdout, progress, done, errc)

	// Kill once the client has had about 1.5 s of traffic.
	deadline := time.After(30 * time.Second)
	for seen := 0; seen < rate*3/2; {
		select {
		case seen = <-progress:
		case n := <-done:
			t.Fatalf("mcpvcr record stopped after %d lines; stderr:\n%s", n, stderr)
		case <-deadline:
			t.Fatalf("the client got only %d lines in 30 s; stderr:\n%s", seen, stderr)
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	received := <-done
	cmd.Wait()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}

	if r := mcpvcr(t, "", "check", db); r.code != 0 {
		t.Fatalf("mcpvcr check after kill -9 = %d; want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	ns := recordedNumbers(t, db)
	checkPrefix(t, ns)
	lost := received - len(ns)
	t.Logf("kill -9: the client received %d lines, the cassette holds %d: %d lost, %.0f ms of traffic at %d/s",
		received, len(ns), lost, float64(lost)*1000/rate, rate)
	// The store commits every 100 ms, so that is the most a crash should
	// lose; the bound allows three times that for a loaded machine.
	if len(ns) == 0 || lost > rate*3/10 {
		t.Errorf("the cassette holds %d of the %d lines the client received: %d lost, more than 300 ms of traffic (the store commits every 100 ms)", len(ns), received, lost)
	}
}

// TestReliability_DiskFull records onto a 2 MB tmpfs until it is full.
// Forwarding must go on to the end, recording must stop with a loud error
// on stderr and exit code 3, and the cassette must stay readable, holding
// a gap-free prefix. It needs root to mount the tmpfs and skips otherwise.
func TestReliability_DiskFull(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("records for seconds")
	}
	const lines = 40000 // about 12 MB of lines that do not compress, six times the file system
	mnt := mountTmpfs(t, "2m")
	flood := goBuild(t, floodPackage)
	db := filepath.Join(mnt, "full.db")
	cmd := exec.Command(mcpvcrBin, "record", "--cassette", db, "--", flood, "-rate", "20000", "-count", fmt.Sprint(lines), "-size", "300", "-noise")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	progress, done, errc := make(chan int, 1), make(chan int, 1), make(chan error, 1)
	go countLines(stdout, progress, done, errc)
	var received int
	select {
	case received = <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("mcpvcr record did not finish within 60 s")
	}
	err = cmd.Wait()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}
	if received != lines {
		t.Errorf("the client received %d lines; want all %d (forwarding must go on when the disk is full)", received, lines)
	}
	if got, want := cmd.ProcessState.ExitCode(), exitFailure; got != want {
		t.Errorf("mcpvcr record on a full disk exited %d (%v); want %d", got, err, want)
	}
	for _, want := range []string{"level=ERROR", "recording stopped", "disk is full", "mcpvcr: recording failed", "try: free disk space"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
	if r := mcpvcr(t, "", "check", db); r.code != 0 {
		t.Fatalf("mcpvcr check on the full disk = %d; want 0\n%s%s", r.code, r.stdout, r.stderr)
	}
	ns := recordedNumbers(t, db)
	checkPrefix(t, ns)
	if len(ns) == 0 || len(ns) >= lines {
		t.Errorf("the cassette holds %d of %d lines; want a non-empty prefix cut where the disk filled", len(ns), lines)
	}
	t.Logf("disk full: the client received all %d lines; the cassette holds the first %d", received, len(ns))
}

// mountTmpfs mounts a tmpfs of the given size in a temporary directory,
// unmounted at cleanup. It skips the test when that is not possible (not
// root, no mount, a container without the capability), except in CI
// (MCPVCR_REQUIRE_PEERS=1), where the check must run.
func mountTmpfs(tb testing.TB, size string) string {
	tb.Helper()
	skip := tb.Skipf
	if mcptest.RequirePeers() {
		skip = tb.Fatalf
	}
	if os.Geteuid() != 0 {
		skip("a full disk is simulated with a small tmpfs, which needs root to mount")
	}
	dir := filepath.Join(tb.TempDir(), "small")
	if err := os.Mkdir(dir, 0o755); err != nil {
		tb.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		skip("cannot mount a %s tmpfs to fill (%v: %s)", size, err, bytes.TrimSpace(out))
	}
	tb.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			tb.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestReliability_Soak runs 1000 concurrent SSE streams through mcpvcr
// record for 60 s on loopback: every stream must arrive whole and in
// order at its client, and the cassette must hold every frame and pass
// check. It is on demand (MCPVCR_SOAK=1), being long and heavy. The proxy
// is a build without the race detector, whose goroutine limit and cost a
// thousand streams would meet.
func TestReliability_Soak(t *testing.T) {
	parallel(t)
	if os.Getenv("MCPVCR_SOAK") != "1" {
		t.Skip("set MCPVCR_SOAK=1 to run the 60 s soak test")
	}
	const (
		streams = 1000
		every   = 200 * time.Millisecond
		events  = int(60 * time.Second / every)
	)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	up := httptest.NewServer(soakUpstream{events: events, every: every})
	defer up.Close()
	bin := goBuild(t, "github.com/mcpvcr/mcpvcr/cmd/mcpvcr")
	db := filepath.Join(t.TempDir(), "soak.db")
	proxy := startServingBin(t, bin, "record", "--upstream", up.URL+"/mcp", "--listen", "127.0.0.1:0", "--cassette", db)

	tr := baseTransport.Clone()
	tr.MaxIdleConnsPerHost = streams
	client := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	errc := make(chan error, streams)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range streams {
		wg.Go(func() { errc <- soakStream(ctx, client, proxy.URL, i+1, events) })
	}
	wg.Wait()
	close(errc)
	failed := 0
	for err := range errc {
		if err != nil {
			if failed < 10 {
				t.Error(err)
			}
			failed++
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d streams were cut or lost events", failed, streams)
	}
	t.Logf("%d streams of %d events each took %v", streams, events, time.Since(start).Round(time.Millisecond))
	if code := proxy.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d; stderr:\n%s", code, proxy.stderr)
	}
	// The build without the race detector checks the big cassette faster.
	out, err := exec.Command(bin, "check", db).CombinedOutput()
	if err != nil {
		t.Fatalf("mcpvcr check: %v\n%s", err, out)
	}
	// Each stream: the request, its events and the result.
	want := fmt.Sprintf("%d streams, %d frames", streams, streams*(events+2))
	if !strings.Contains(string(out), want) {
		t.Errorf("mcpvcr check says\n%s\nwant %q: every frame recorded", out, want)
	}
}

// soakUpstream answers every POSTed request with an SSE stream of events
// numbered 1..events, one every interval, then the result.
type soakUpstream struct {
	events int
	every  time.Duration
}

func (s soakUpstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	id := jsonrpc.Parse(body).ID
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	// The server's own pacing: a steady trickle on each stream.
	tick := time.NewTicker(s.every)
	defer tick.Stop()
	for n := 1; n <= s.events; n++ {
		select {
		case <-tick.C:
		case <-r.Context().Done():
			return
		}
		fmt.Fprintf(w, "id: %d\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":%s,\"progress\":%d}}\n\n", n, id, n)
		if rc.Flush() != nil {
			return
		}
	}
	fmt.Fprintf(w, "data: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{}}\n\n", id)
}

// soakStream posts one request through the proxy and reads its stream,
// which must hold the numbered events in order and end with the result.
func soakStream(ctx context.Context, c *http.Client, url string, id, events int) error {
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"soak","_meta":{"progressToken":%d}}}`, id, id)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("stream %d: %w", id, err)
	}
	defer resp.Body.Close()
	r := sse.NewReader(resp.Body)
	for n := 1; n <= events+1; n++ {
		ev, err := r.Next()
		if err != nil {
			return fmt.Errorf("stream %d: cut after %d events: %w", id, n-1, err)
		}
		if ev.Partial {
			return fmt.Errorf("stream %d: event %d cut short", id, n)
		}
		if n <= events && ev.ID != fmt.Sprint(n) {
			return fmt.Errorf("stream %d: event %d has id %q", id, n, ev.ID)
		}
		if n > events && !bytes.Contains(ev.Data, []byte(`"result"`)) {
			return fmt.Errorf("stream %d: ends with %q, not the result", id, ev.Data)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		return fmt.Errorf("stream %d: more after the result (%v)", id, err)
	}
	return nil
}
