// Command testprogress runs go test and says where it is: a line per
// package when it ends (with its time), every top-level test that took
// long, and every half minute which tests are still running, so that a
// package that runs for minutes is not silent. A failing test's output is
// printed whole when it fails. It exits with go test's exit code.
//
//	go run ./scripts/testprogress -race -timeout 30m ./...
//
// Everything after the program name is passed to go test, which is run
// with -json.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// slow is how long a top-level test runs before its end is worth a line.
const slow = 20 * time.Second

// every is how often the tests still running are listed.
const every = 30 * time.Second

// event is one line of go test -json (see go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// pkgState is what is known of one package's run.
type pkgState struct {
	started time.Time
	passed  int
	failed  int
	running map[string]time.Time // top-level tests running, by when they started
	output  map[string][]string  // output of each test (and subtest) not yet ended
	loose   []string             // package output outside any test
}

// progress is the state of the whole run, written by the reader and read
// by the ticker.
type progress struct {
	mu   sync.Mutex // guards pkgs and out
	pkgs map[string]*pkgState
	out  io.Writer
}

func main() {
	cmd := exec.Command("go", append([]string{"test", "-json"}, os.Args[1:]...)...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(2)
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "testprogress: cannot run go test:", err)
		os.Exit(2)
	}
	p := &progress{pkgs: map[string]*pkgState{}, out: os.Stdout}
	done := make(chan struct{})
	go p.tick(done)
	p.read(stdout)
	close(done)
	if err := cmd.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(ee.ExitCode())
		}
		fmt.Fprintln(os.Stderr, "testprogress:", err)
		os.Exit(2)
	}
}

// read consumes go test's JSON stream; a line that is not JSON (a build
// error on stdout) is printed as it is.
func (p *progress) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil || e.Action == "" {
			p.mu.Lock()
			fmt.Fprintln(p.out, sc.Text())
			p.mu.Unlock()
			continue
		}
		p.mu.Lock()
		p.handle(e, time.Now())
		p.mu.Unlock()
	}
}

// short is a package path without its module prefix.
func short(pkg string) string {
	if i := strings.Index(pkg, "/mcpvcr/mcpvcr/"); i >= 0 {
		return pkg[i+len("/mcpvcr/mcpvcr/"):]
	}
	return pkg
}

func (p *progress) state(pkg string, now time.Time) *pkgState {
	s := p.pkgs[pkg]
	if s == nil {
		s = &pkgState{started: now, running: map[string]time.Time{}, output: map[string][]string{}}
		p.pkgs[pkg] = s
	}
	return s
}

func (p *progress) handle(e event, now time.Time) {
	s := p.state(e.Package, now)
	top := e.Test != "" && !strings.Contains(e.Test, "/")
	switch {
	case e.Action == "build-output":
		fmt.Fprint(p.out, e.Output)
	case e.Action == "output" && e.Test != "":
		s.output[e.Test] = append(s.output[e.Test], e.Output)
	case e.Action == "output":
		s.loose = append(s.loose, e.Output)
	case e.Test == "" && (e.Action == "pass" || e.Action == "fail" || e.Action == "skip"):
		p.ended(e, s)
	case (e.Action == "run" || e.Action == "cont") && top:
		s.running[e.Test] = now
	case e.Action == "pause" && top:
		delete(s.running, e.Test)
	case e.Action == "pass" || e.Action == "skip" || e.Action == "fail":
		if e.Action == "fail" {
			fmt.Fprintf(p.out, "--- FAIL %s %s (%.1fs)\n", short(e.Package), e.Test, e.Elapsed)
			for _, line := range s.output[e.Test] {
				fmt.Fprint(p.out, "    ", line)
			}
		}
		delete(s.output, e.Test)
		if !top {
			return
		}
		delete(s.running, e.Test)
		if e.Action == "fail" {
			s.failed++
			return
		}
		s.passed++
		if time.Duration(e.Elapsed*float64(time.Second)) >= slow {
			fmt.Fprintf(p.out, "      %s %s %s (%.0fs)\n", short(e.Package), e.Test, e.Action, e.Elapsed)
		}
	}
}

// ended prints a package's end; a failed package without a failed test
// (a build error, a panic, a timeout) also gets its loose output.
func (p *progress) ended(e event, s *pkgState) {
	defer delete(p.pkgs, e.Package)
	if e.Action == "skip" { // no test files
		return
	}
	word := map[string]string{"pass": "ok  ", "fail": "FAIL", "skip": "skip"}[e.Action]
	fmt.Fprintf(p.out, "%s  %s  %.1fs  (%d tests passed, %d failed)\n", word, short(e.Package), e.Elapsed, s.passed, s.failed)
	if e.Action == "fail" && s.failed == 0 {
		for _, line := range s.loose {
			fmt.Fprint(p.out, "    ", line)
		}
	}
}

// tick lists, every half minute, the tests still running in each package
// that has run for longer than that.
func (p *progress) tick(done <-chan struct{}) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case now := <-t.C:
			p.mu.Lock()
			p.report(now)
			p.mu.Unlock()
		}
	}
}

func (p *progress) report(now time.Time) {
	var pkgs []string
	for pkg, s := range p.pkgs {
		if now.Sub(s.started) >= every && len(s.running) > 0 {
			pkgs = append(pkgs, pkg)
		}
	}
	slices.Sort(pkgs)
	for _, pkg := range pkgs {
		s := p.pkgs[pkg]
		var names []string
		for name, since := range s.running {
			names = append(names, fmt.Sprintf("%s (%s)", name, now.Sub(since).Round(time.Second)))
		}
		slices.Sort(names)
		if len(names) > 4 {
			names = append(names[:4], fmt.Sprintf("and %d more", len(names)-4))
		}
		fmt.Fprintf(p.out, "  ... %s, %s in: %d tests passed; running %s\n", short(pkg), now.Sub(s.started).Round(time.Second), s.passed, strings.Join(names, ", "))
	}
}
