package matrix

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestMatrix runs every cell of the matrix (or, without -matrix.full, the
// cheap slice) and checks properties P1, P3, P4, P5 and P6 on it.
func TestMatrix(t *testing.T) {
	var outside int
	for _, c := range cells() {
		if !full() && !c.inSlice() {
			outside++
			continue
		}
		t.Run(c.name(), func(t *testing.T) {
			t.Parallel() // cells wait on processes; go test -parallel bounds how many at once
			if why := c.cannot(); why != "" {
				t.Skipf("cell not formed: %s", why)
			}
			if c.client.peer != nil {
				c.client.peer(t)
			}
			runCell(t, c)
		})
	}
	if outside > 0 {
		t.Logf("%d cells are outside the slice plain go test runs: make matrix runs them (-matrix.full or MATRIX_FULL=1)", outside)
	}
}

// A recording is a session recorded in a cell, with what its client saw.
type recording struct {
	db       string
	upstream endpoint
	path     string // the endpoint path the replay server serves (/mcp, /sse)
	live     run
}

func runCell(t *testing.T, c cell) {
	rec := record(t, c)
	// A live run in which the server never answered a request is no
	// reference for replay, which serves what was recorded and must not
	// invent the answer: server-everything's get-roots-list asks for the
	// roots on the GET stream, and hangs when it asks before the client
	// opened that stream (the request is dropped), which a loaded machine
	// makes happen now and then. Such a run is recorded again, twice at
	// most.
	for try := 1; try < 3 && serverHung(rec.live.t); try++ {
		t.Logf("live run %d: the client gave up waiting for the server (%s); recording again", try, compact(rec.live.t))
		rec = record(t, c)
	}
	if len(rec.live.t.Steps) == 0 {
		t.Fatalf("the live run saw nothing")
	}
	t.Logf("live transcript: %s", compact(rec.live.t))

	// P1 (and P6, from the same replay): the same client with another
	// clientInfo gets from replay what it got live.
	replayed, report, code := replay(t, c, rec, nil, call{rev: c.rev, plan: c.plan, info: "matrix-replayer", notes: len(rec.live.t.Notes)})
	replayed.t = lateNotes(t, rec, replayed.t)
	t.Run("P1", func(t *testing.T) {
		if diff := cmp.Diff(rec.live.t, replayed.t); diff != "" {
			t.Errorf("replay differs from the live run (-live +replay):\n%s\nreplay stderr:\n%s", diff, report)
		}
		checkClean(t, code, report)
	})
	if c.scenario.cancels {
		t.Run("P6", func(t *testing.T) {
			for i, e := range rec.live.t.Steps {
				if i >= len(replayed.t.Steps) {
					t.Fatalf("replay ended before step %d (%s)", i, e.Step)
				}
				if diff := cmp.Diff(e, replayed.t.Steps[i]); diff != "" && (e.Progress != nil || e.Error == "cancelled" || c.plan[0].Script) {
					t.Errorf("step %s: the cancelling client did not get the recorded frames in recorded order (-live +replay):\n%s\nreplay stderr:\n%s", e.Step, diff, report)
				}
			}
		})
	}

	// P2: order, over stdio (one stream each way; over HTTP a second
	// recording cannot tell the order of frames on different connections).
	if c.transport.name == "stdio" && c.client.name != "inspector" {
		t.Run("P2", func(t *testing.T) { orderCheck(c)(t, c, rec) })
	}

	// P3: resumption after every cut of every SSE answer with event ids.
	if c.transport.name == "http" {
		t.Run("P3", func(t *testing.T) { checkResumption(t, c, rec) })
	}

	// P5: a client answering the server's requests otherwise is reported.
	if c.scenario.serverRequests && c.client.answers {
		t.Run("P5", func(t *testing.T) {
			_, report, code := replay(t, c, rec, nil, call{rev: c.rev, plan: c.plan, info: "matrix-other-answers", alt: true})
			if code != 1 || strings.Contains(report, " 0 unmatched") {
				t.Errorf("replay to a client answering otherwise exited %d; want 1 with its answers unmatched:\n%s", code, report)
			}
		})
	}

	checkTasks(t, c, rec) // P7, in a task scenario (tasks_test.go)

	// P4 last: verify records its runs in the cassette.
	t.Run("P4", func(t *testing.T) { checkVerify(t, c, rec) })
}

// record starts the cell's server and runs its client live through
// mcpvcr record.
func record(t *testing.T, c cell) recording {
	t.Helper()
	up := c.transport.start(t)
	r := recording{db: filepath.Join(t.TempDir(), "c.db"), upstream: up}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("recording (session 1):\n%s", mcpvcr(t, "show", "1", "--cassette", r.db).stdout)
		}
	})
	live := call{rev: c.rev, plan: c.plan, info: "matrix-recorded"}
	if up.transport == "stdio" {
		ep := endpoint{transport: "stdio", argv: append([]string{mcpvcrBin, "record", "--cassette", r.db, "--"}, up.argv...)}
		r.live = c.client.run(t, ep, live)
		return r
	}
	u, err := url.Parse(up.url)
	if err != nil {
		t.Fatal(err)
	}
	r.path = u.Path
	proxy := startServing(t, "record", "--cassette", r.db, "--upstream", up.url, "--listen", "127.0.0.1:0")
	r.live = c.client.run(t, endpoint{transport: up.transport, url: proxy.URL}, live)
	if code := proxy.Stop(); code != 0 {
		t.Fatalf("mcpvcr record exited %d:\n%s", code, proxy.stderr)
	}
	return r
}

// replay runs the client against mcpvcr replay of session 1 with extra
// flags and returns what it saw, replay's stderr and exit code.
func replay(t *testing.T, c cell, r recording, extra []string, cl call) (run, string, int) {
	t.Helper()
	if r.upstream.transport == "stdio" {
		argv := append([]string{mcpvcrBin, "replay", "1", "--stdio", "--cassette", r.db}, extra...)
		got := c.client.run(t, endpoint{transport: "stdio", argv: argv}, cl)
		return got, got.stderr, got.code
	}
	rep := startServing(t, append([]string{"replay", "1", "--cassette", r.db, "--listen", "127.0.0.1:0"}, extra...)...)
	got := c.client.run(t, endpoint{transport: r.upstream.transport, url: rep.URL + r.path}, cl)
	code := rep.Stop()
	return got, rep.stderr.String(), code
}

// checkClean requires replay to have exited 0 with every client frame matched.
// diffTranscripts is cmp.Diff of two transcripts.
func diffTranscripts(a, b Transcript) string { return cmp.Diff(a, b) }

// lateNotes returns got without the notifications it holds beyond the
// live run's, when the live run's are the others in order: the recording
// holds them (the live client closed before they came), and a cut moves
// when the client stops listening. Anything else is left for the diff.
func lateNotes(t *testing.T, r recording, got Transcript) Transcript {
	live := r.live.t.Notes
	if len(got.Notes) <= len(live) {
		return got
	}
	var kept, extra []any
	for _, n := range got.Notes {
		if len(kept) < len(live) && cmp.Equal(n, live[len(kept)]) {
			kept = append(kept, n)
		} else {
			extra = append(extra, n)
		}
	}
	if len(kept) < len(live) {
		return got
	}
	t.Logf("the client got %d recorded notification(s) after those the live client got before it closed: %v", len(extra), extra)
	got.Notes = kept
	return got
}

func checkClean(t *testing.T, code int, report string) {
	t.Helper()
	if code != 0 || !strings.Contains(report, " 0 unmatched") || strings.Contains(report, "invented an answer") {
		t.Errorf("mcpvcr replay exited %d; want 0, every client frame matched and nothing invented:\n%s", code, report)
	}
}

// sseEventRE is a server frame of show's timeline with an SSE event id:
// its stream kind and number.
var sseEventRE = regexp.MustCompile(`(?m)^\s*\d+\s+\S+\s+<\s+(post|get)#(\d+)\s.*\bsse-id=.*$`)

// cutPoints returns, for each stream of session 1 with SSE event ids, the
// stream number and how many events it holds.
func cutPoints(t *testing.T, db string) (streams []int, events map[int]int, unowed map[int][]bool) {
	t.Helper()
	show := mcpvcr(t, "show", "1", "--cassette", db)
	if show.code != 0 {
		t.Fatalf("mcpvcr show exited %d: %s", show.code, show.stderr)
	}
	events, unowed = map[int]int{}, map[int][]bool{}
	for _, m := range sseEventRE.FindAllStringSubmatch(show.stdout, -1) {
		n, _ := strconv.Atoi(m[2])
		if events[n] == 0 {
			streams = append(streams, n)
		}
		events[n]++
		// A standalone GET stream's events owe the client nothing it
		// waits for: one that is done may close before it reconnects.
		unowed[n] = append(unowed[n], strings.Contains(m[0], "after-can") || m[1] == "get")
	}
	return streams, events, unowed
}

// cancelledRest reports whether every event of a stream after the first
// after was sent after the client cancelled the request it answers, or
// on the standalone GET stream: a client need not resume the stream for
// them (P1's results are still compared).
func cancelledRest(unowed []bool, after int) bool {
	for _, ac := range unowed[after:] {
		if !ac {
			return false
		}
	}
	return after < len(unowed)
}

// chaosLineRE is one fault of a chaos report and its verdict.
var chaosLineRE = regexp.MustCompile(`(?m)^chaos: \d+\. session \d+, (\S+) at [^:]+: .*: (pass|fail|not observed)$`)

func checkResumption(t *testing.T, c cell, r recording) {
	streams, events, unowed := cutPoints(t, r.db)
	type cut struct{ stream, after int }
	var cuts []cut
	for _, n := range streams {
		for e := 1; e < events[n]; e++ {
			cuts = append(cuts, cut{n, e})
		}
	}
	if len(cuts) == 0 {
		t.Logf("no SSE answer with event ids and more than one event: nothing to cut")
	} else if !full() || *maxCuts == 1 {
		// The slice: the middle cut of the stream with the most events.
		best := streams[0]
		for _, n := range streams {
			if events[n] > events[best] {
				best = n
			}
		}
		if events[best] < 2 {
			best = cuts[0].stream
		}
		cuts = []cut{{best, max(1, events[best]/2)}}
	}
	if *maxCuts > 1 && len(cuts) > *maxCuts {
		t.Logf("%d cut points; running the first %d (-matrix.cuts)", len(cuts), *maxCuts)
		cuts = cuts[:*maxCuts]
	}
	for _, ct := range cuts {
		t.Run(fmt.Sprintf("cut-%d:%d", ct.stream, ct.after), func(t *testing.T) {
			got, report, code := replay(t, c, r, []string{"--cut", fmt.Sprintf("%d:%d", ct.stream, ct.after)}, call{rev: c.rev, plan: c.plan, info: "matrix-resumer", notes: len(r.live.t.Notes)})
			got.t = lateNotes(t, r, got.t)
			if diff := cmp.Diff(r.live.t, got.t); diff != "" && c.client.dropsOnCut != "" {
				t.Logf("the client's results differ after the cut; not replay's doing: %s (-live +replay):\n%s", c.client.dropsOnCut, diff)
			} else if diff != "" {
				t.Errorf("after the cut, the resuming client's results differ (-live +replay):\n%s\nreplay stderr:\n%s", diff, report)
			}
			checkClean(t, code, report)
			switch resumed := regexp.MustCompile(`1 stream cut, [1-9]\d* resumed`).MatchString(report); {
			case !resumed && cancelledRest(unowed[ct.stream], ct.after):
				t.Logf("the client did not resume: what the cut held back came after it cancelled the request, or on the standalone GET stream")
			case !resumed:
				t.Errorf("replay does not report the cut stream resumed:\n%s", report)
			}
		})
	}
	n := 1
	if full() {
		n = 5
	}
	if *chaosSeeds > 0 {
		n = *chaosSeeds
	}
	var seeds []int
	for i := 1; i <= n; i++ {
		seeds = append(seeds, i)
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprintf("chaos-%d", seed), func(t *testing.T) {
			got, report, code := replay(t, c, r, []string{"--chaos", strconv.Itoa(seed), "--chaos-faults", "cut-resumable", "--chaos-rate", "1"}, call{rev: c.rev, plan: c.plan, info: "matrix-resumer", notes: len(r.live.t.Notes)})
			got.t = lateNotes(t, r, got.t)
			faults := chaosLineRE.FindAllStringSubmatch(report, -1)
			if len(faults) == 0 {
				t.Logf("chaos drew no fault (no resumable stream):\n%s", report)
			}
			for _, f := range faults {
				if f[2] == "fail" {
					t.Errorf("chaos verdict %s for %s; the client resumed (want pass):\n%s", f[2], f[1], report)
				}
			}
			if diff := cmp.Diff(r.live.t, got.t); diff != "" && c.client.dropsOnCut != "" {
				t.Logf("the client's results differ under chaos; not replay's doing: %s (-live +replay):\n%s", c.client.dropsOnCut, diff)
			} else if diff != "" {
				t.Errorf("under chaos cut-resumable, the client's results differ (-live +replay):\n%s\nreplay stderr:\n%s", diff, report)
				for _, f := range faults {
					if f[2] == "pass" {
						t.Errorf("the chaos verdict disagrees: %s judged pass, but the client did not end with the live results", f[1])
					}
				}
			}
			if code != 0 || strings.Contains(report, "invented an answer") {
				t.Errorf("chaos replay exited %d; want 0 and nothing invented:\n%s", code, report)
			}
		})
	}
}

// lastSession returns the id of the cassette's latest session, kept
// verify runs included.
func lastSession(t *testing.T, db string) string {
	var sessions []struct {
		ID int64 `json:"id"`
	}
	res := mcpvcr(t, "ls", "--all", "--cassette", db, "--format", "json")
	if err := json.Unmarshal([]byte(res.stdout), &sessions); err != nil || len(sessions) == 0 {
		return "1"
	}
	return fmt.Sprint(sessions[len(sessions)-1].ID)
}

// checkVerify verifies session 1 against its own live server, 20 times
// in the full matrix (2 in the slice): exit 0 every time.
func checkVerify(t *testing.T, c cell, r recording) {
	runs := 2
	if full() {
		runs = 20
	}
	if *verifyRuns > 0 {
		runs = *verifyRuns
	}
	args := []string{"verify", "1", "--cassette", r.db, "--keep"}
	if r.upstream.transport == "stdio" {
		args = append(append(args, "--"), r.upstream.argv...)
	} else {
		args = append(args, "--upstream", r.upstream.url)
	}
	var failed []int
	for i := range runs {
		res := mcpvcr(t, args...)
		if res.code != 0 {
			failed = append(failed, i)
			if len(failed) == 1 {
				t.Errorf("verify run %d exited %d; want 0 against the same server:\n%s%s", i, res.code, res.stdout, res.stderr)
				// The recording, with the run verify kept, for whoever
				// looks into it: which side of a timer each session was on.
				shown := mcpvcr(t, "show", "1", "--cassette", r.db)
				t.Logf("the recorded session:\n%s", shown.stdout)
				if id := lastSession(t, r.db); id != "1" {
					t.Logf("the verify run:\n%s", mcpvcr(t, "show", id, "--cassette", r.db).stdout)
				}
			}
		}
	}
	if len(failed) > 0 {
		t.Errorf("verify exited non-zero in %d of %d runs (%v)", len(failed), runs, failed)
	}
}

// compact is t as short text for the log.
func compact(tr Transcript) string {
	var parts []string
	for _, e := range tr.Steps {
		s := e.Step
		if e.Error != "" {
			s += " error=" + e.Error
		}
		if len(e.Progress) > 0 {
			s += fmt.Sprintf(" progress=%d", len(e.Progress))
			if slices.Contains(e.Progress, any("cancel")) {
				s += "(cancel)"
			}
		}
		if e.Wait != "" {
			s += " wait=" + e.Wait
		}
		parts = append(parts, s)
	}
	return fmt.Sprintf("negotiated %s: %s; %d notes", tr.Negotiated, strings.Join(parts, "; "), len(tr.Notes))
}

// TestMatrixCells lists the cells of the matrix: those formed, and why
// each other is not. It runs no peer.
func TestMatrixCells(t *testing.T) {
	formed, slice := 0, 0
	for _, c := range cells() {
		if why := c.cannot(); why != "" {
			t.Logf("not formed: %s: %s", c.name(), why)
			continue
		}
		formed++
		tag := ""
		if c.inSlice() {
			slice++
			tag = " (slice)"
		}
		t.Logf("cell: %s%s", c.name(), tag)
	}
	t.Logf("%d cells formed, %d of them in the slice plain go test runs", formed, slice)
	if formed == 0 || slice == 0 {
		t.Errorf("the matrix forms %d cells, %d in the slice", formed, slice)
	}
}

// serverHung reports whether a step of tr ended with the client giving up
// on a request the server never answered.
func serverHung(tr Transcript) bool {
	return slices.ContainsFunc(tr.Steps, func(e Entry) bool {
		return strings.Contains(e.Error, "Request timed out") || strings.Contains(e.Error, "context deadline exceeded")
	})
}
