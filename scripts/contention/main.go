// Command contention measures mcpvcr record when many recorders share one
// cassette, as when a client app starts all its stdio servers at once:
//
//   - first answer: the time from starting a server command to its answer
//     to initialize, directly and through mcpvcr record while -busy other
//     recorders write into the same cassette (each a flood server sending
//     -rate lines a second);
//   - together: -busy recorders of the Go SDK test server started at once
//     on a fresh cassette, each timed to its initialize answer;
//   - kill -9: one busy recorder killed; the lines its client received
//     but the cassette lacks, in milliseconds at -rate.
//
// Run it from the repository root (it builds mcpvcr, the flood server and
// the test server):
//
//	go run ./scripts/contention [-busy 8] [-rate 2000] [-rounds 10]
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

var (
	busy   = flag.Int("busy", 8, "busy recorders sharing the cassette")
	rate   = flag.Int("rate", 2000, "lines a second each busy recorder's server sends")
	rounds = flag.Int("rounds", 10, "measurements of the first answer")
	bin    = flag.String("mcpvcr", "", "the mcpvcr binary to measure; if empty, built from ./cmd/mcpvcr")
)

func main() {
	flag.Parse()
	dir, err := os.MkdirTemp("", "mcpvcr-contention-")
	check(err)
	defer os.RemoveAll(dir)
	mcpvcr := *bin
	if mcpvcr == "" {
		mcpvcr = build(dir, "./cmd/mcpvcr")
	}
	flood := build(dir, "./internal/mcptest/flood")
	server := build(dir, "./internal/mcptest/testserver")
	db := filepath.Join(dir, "shared.db")

	// Busy recorders.
	var floods []*floodRun
	for i := range *busy {
		floods = append(floods, startFlood(mcpvcr, db, flood, i))
	}
	for _, f := range floods {
		f.waitLines(*rate / 10) // all writing
	}

	var direct, recorded []time.Duration
	for range *rounds {
		direct = append(direct, firstAnswer(exec.Command(server)))
		recorded = append(recorded, firstAnswer(exec.Command(mcpvcr, "record", "--cassette", db, "--", server)))
	}
	fmt.Printf("first answer to initialize with %d busy recorders at %d lines/s each (%d rounds):\n", *busy, *rate, *rounds)
	fmt.Printf("  direct          median %6.1f ms  max %6.1f ms\n", ms(median(direct)), ms(slices.Max(direct)))
	fmt.Printf("  mcpvcr record   median %6.1f ms  max %6.1f ms\n", ms(median(recorded)), ms(slices.Max(recorded)))
	var diffs []time.Duration
	for i := range recorded {
		diffs = append(diffs, recorded[i]-direct[i])
	}
	fmt.Printf("  difference      median %6.1f ms  max %6.1f ms (record minus direct, round by round)\n", ms(median(diffs)), ms(slices.Max(diffs)))

	// kill -9 of each busy recorder in turn, the others still writing.
	var losses []time.Duration
	for _, f := range floods {
		losses = append(losses, f.kill9(mcpvcr, db))
	}
	fmt.Printf("kill -9 of a recorder among %d busy ones: lost median %.1f ms, max %.1f ms of its lines\n", *busy, ms(median(losses)), ms(slices.Max(losses)))

	// Servers started together, directly and through recorders sharing a
	// fresh cassette.
	fresh := filepath.Join(dir, "fresh.db")
	for _, way := range []string{"direct", "mcpvcr record"} {
		var wg sync.WaitGroup
		together := make([]time.Duration, *busy)
		for i := range *busy {
			cmd := exec.Command(server)
			if way != "direct" {
				cmd = exec.Command(mcpvcr, "record", "--cassette", fresh, "--", server)
			}
			wg.Go(func() { together[i] = firstAnswer(cmd) })
		}
		wg.Wait()
		fmt.Printf("%d servers started together, %s: initialize answered in median %.1f ms, max %.1f ms\n",
			*busy, way, ms(median(together)), ms(slices.Max(together)))
	}
}

func build(dir, pkg string) string {
	bin := filepath.Join(dir, filepath.Base(pkg))
	out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "go build %s: %v\n%s", pkg, err, out)
		os.Exit(1)
	}
	return bin
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"contention","version":"1"}}}` + "\n"

// firstAnswer starts cmd, sends initialize and returns the time from the
// start to the answer's line. It then closes stdin and waits for cmd.
func firstAnswer(cmd *exec.Cmd) time.Duration {
	stdin, err := cmd.StdinPipe()
	check(err)
	stdout, err := cmd.StdoutPipe()
	check(err)
	start := time.Now()
	check(cmd.Start())
	_, err = io.WriteString(stdin, initialize)
	check(err)
	line, err := bufio.NewReader(stdout).ReadString('\n')
	took := time.Since(start)
	if err != nil || !strings.Contains(line, `"id":1`) {
		fmt.Fprintf(os.Stderr, "no answer to initialize: %q %v\n", line, err)
		os.Exit(1)
	}
	stdin.Close()
	_ = cmd.Wait()
	return took
}

// floodRun is a busy recorder and the count of lines its client got.
type floodRun struct {
	cmd  *exec.Cmd
	name string
	mu   sync.Mutex
	n    int // the n of the last line received
	eof  chan struct{}
}

func startFlood(mcpvcr, db, flood string, i int) *floodRun {
	f := &floodRun{eof: make(chan struct{}), name: fmt.Sprintf("busy%d", i)}
	f.cmd = exec.Command(mcpvcr, "record", "--cassette", db, "--name", f.name, "--", flood, "-rate", fmt.Sprint(*rate), "-for", "10m")
	_, err := f.cmd.StdinPipe() // held open
	check(err)
	out, err := f.cmd.StdoutPipe()
	check(err)
	check(f.cmd.Start())
	go func() {
		defer close(f.eof)
		br := bufio.NewReaderSize(out, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if n := lineNumber(line); n > 0 {
				f.mu.Lock()
				f.n = n
				f.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	return f
}

func (f *floodRun) received() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

func (f *floodRun) waitLines(n int) {
	for f.received() < n {
		time.Sleep(10 * time.Millisecond)
	}
}

// kill9 kills the recorder, waits for its output to end, and returns how
// much its cassette lacks of what its client received, in time at rate.
func (f *floodRun) kill9(mcpvcr, db string) time.Duration {
	check(f.cmd.Process.Signal(syscall.SIGKILL))
	<-f.eof
	_ = f.cmd.Wait()
	got := f.received()
	recorded := maxRecorded(mcpvcr, db, f.name)
	return time.Duration(got-recorded) * time.Second / time.Duration(*rate)
}

// maxRecorded returns the largest flood n that session name holds.
func maxRecorded(mcpvcr, db, name string) int {
	out, err := exec.Command(mcpvcr, "export", "--cassette", db).Output()
	check(err)
	session, best := int64(-1), 0
	for line := range strings.Lines(string(out)) {
		var rec struct {
			Type, Name, Raw string
			ID, Session     int64
		}
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		switch {
		case rec.Type == "session" && rec.Name == name:
			session = rec.ID
		case rec.Type == "frame" && rec.Session == session:
			best = max(best, lineNumber([]byte(rec.Raw)))
		}
	}
	return best
}

func lineNumber(raw []byte) int {
	var l struct {
		Params struct {
			Data struct {
				N int `json:"n"`
			} `json:"data"`
		} `json:"params"`
	}
	_ = json.Unmarshal(raw, &l)
	return l.Params.Data.N
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
