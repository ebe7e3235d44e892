package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/mcpvcr/mcpvcr/store"
)

// options are the command-line flags.
type options struct {
	rounds     int
	quick      bool
	rssMB      int
	rssEvent   int
	growthMB   int
	only       *regexp.Regexp
	cpuprofile string
	timeout    time.Duration
	snoopBin   string
	samples    string // -samples: a directory for each request's times
}

func main() {
	var o options
	var only, peer, upstream, cassette, gen, snoopBin string
	var genSessions int
	var genTransport string
	flag.IntVar(&o.rounds, "rounds", 5, "timed rounds per load and mode; the table shows medians")
	flag.BoolVar(&o.quick, "quick", false, "a fifth of the requests, 3 rounds and a 64 MB memory run: a smoke test, not a measurement")
	flag.IntVar(&o.rssMB, "rss-mb", 256, "size in MB of the SSE stream forwarded for the peak-memory rows (1024 for the 1 GB target); 0 skips them")
	flag.IntVar(&o.rssEvent, "rss-event", 4096, "size in bytes of each event of that stream")
	flag.IntVar(&o.growthMB, "growth-mb", 1024, "size in MB of the generated cassette the growth rows append to; 0 skips them")
	flag.StringVar(&only, "only", "", "run only the loads whose name matches this `regexp` (http, sse, stdio, ingest, growth, rss, replay start, replay start http)")
	flag.StringVar(&o.cpuprofile, "cpuprofile", "", "write a CPU profile of the whole run to `file`, and one of each peer process to file.KIND.N")
	flag.BoolVar(&floor, "floor", false, "also run every HTTP and stdio load through record into a sink that keeps nothing (the same recording work, no store), in the same rounds: the floor no store can take record below")
	flag.StringVar(&snoopBin, "mcpsnoop", "", "also run every HTTP and stdio load through the mcpsnoop `binary` (v0.18.0, built outside this module), in the same rounds, with its ratios and the frames it lost")
	flag.StringVar(&o.samples, "samples", "", "also write each timed request's latency and time to the first SSE event, a file per load and mode, into `dir` (created if missing)")
	flag.DurationVar(&o.timeout, "timeout", 30*time.Minute, "give up after this long")
	flag.StringVar(&gen, "gen-cassette", "", "write a generated cassette of -gen-sessions stdio sessions of 64 frames, sharing their opening frames, as JSONL to `file` (- for stdout), and exit")
	flag.IntVar(&genSessions, "gen-sessions", 10000, "sessions of the -gen-cassette cassette")
	flag.StringVar(&genTransport, "gen-transport", "stdio", "the transport of the -gen-cassette sessions: stdio, http (Streamable HTTP), sse (HTTP+SSE), \"http modern\" (2026-07-28) or \"http refused\" (with refusals by sessions without a session id)")
	flag.StringVar(&peer, "peer", "", "internal: run as a peer (stdio, http-peer, http-pass, http-record, http-replay)")
	flag.StringVar(&upstream, "upstream", "", "internal: the upstream URL of an http-pass or http-record peer")
	flag.StringVar(&cassette, "cassette", "", "internal: the cassette of an http-record or http-replay peer")
	flag.BoolVar(&discard, "discard", false, "internal: an http-record peer records into a sink that keeps nothing (-floor)")
	flag.BoolVar(&fixedProcs, "fixed-procs", false, "record with GOMAXPROCS as the runtime sets it, not fitted to the load as mcpvcr record does (package procs), to compare the two")
	flag.BoolVar(&longPass, "long-pass", false, "run the HTTP passthrough as one process for a load's warm-up and all its rounds, as the bench did before its sixteenth round, rather than a new one each run as every other proxy: to compare the two")
	flag.BoolVar(&longLived, "long-lived", false, "run the HTTP passthrough, floor and record each as one process for a load's warm-up and all its rounds (replay and mcpsnoop stay one per run): proxies that have warmed up, to compare with new ones")
	flag.BoolVar(&recordOptions.LowPriority, "low-writer", false, "record with the cassette's writer at the lowest priority (store.Options.LowPriority), to compare the two")
	text := flag.String("text", "repeat", "what the server's payloads are padded with: `repeat` (one letter, which a compressed cassette shrinks 30x and more) or words (words drawn at random, about 3x, as JSON-RPC traffic of varied text)")
	flag.Parse()

	switch *text {
	case "repeat":
	case "words":
		os.Setenv(benchTextEnv, "words") // for the peer processes
	default:
		fmt.Fprintf(os.Stderr, "bench: -text %q: want repeat or words\n", *text)
		os.Exit(2)
	}
	textWords = os.Getenv(benchTextEnv) == "words"
	if gen != "" {
		if err := writeGenCassette(gen, genSessions, genTransport); err != nil {
			fmt.Fprintln(os.Stderr, "bench: -gen-cassette:", err)
			os.Exit(1)
		}
		return
	}
	if peer != "" {
		if err := runPeer(peer, upstream, cassette, o.cpuprofile); err != nil {
			fmt.Fprintln(os.Stderr, "bench peer:", err)
			os.Exit(1)
		}
		return
	}
	var err error
	if o.only, err = regexp.Compile(only); err != nil {
		fmt.Fprintln(os.Stderr, "bench: -only:", err)
		os.Exit(2)
	}
	o.snoopBin = snoopBin
	if o.quick {
		o.rounds = min(o.rounds, 3)
		o.rssMB = min(o.rssMB, 64)
		o.growthMB = min(o.growthMB, 64)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	if err := bench(ctx, o, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// recordOptions open the cassettes that record records into.
var recordOptions store.Options

// fixedProcs leaves the record peers' GOMAXPROCS as the runtime sets it
// (-fixed-procs).
var fixedProcs bool

// runPeer runs this program as one of its own peers.
func runPeer(peer, upstream, cassette, cpuprofile string) error {
	if cpuprofile != "" {
		stop, err := startProfile(cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
	}
	switch peer {
	case "stdio":
		return serveStdio(os.Stdin, os.Stdout)
	case "http-peer", "http-pass", "http-record", "http-replay":
		return httpChild(peer, upstream, cassette)
	}
	return fmt.Errorf("unknown peer %q", peer)
}

// load is one workload: n requests of tool from conc workers.
type load struct {
	name  string
	stdio bool
	tool  string
	conc  int
	n     int
}

// loads are the workloads, each at concurrency 1 and 8.
var loads = []load{
	{"http json 2KB", false, toolBig, 1, 2000},
	{"http json 2KB", false, toolBig, 8, 8000},
	{"http sse 100ev", false, toolStream, 1, 200},
	{"http sse 100ev", false, toolStream, 8, 800},
	{"stdio json 2KB", true, toolBig, 1, 5000},
	{"stdio json 2KB", true, toolBig, 8, 10000},
	{"stdio 100 notes", true, toolStream, 1, 300},
	{"stdio 100 notes", true, toolStream, 8, 600},
}

// ingestSizes are the frame sizes of the store ingest rows, with the
// frames appended per run.
// growthFrames is how many 200 B frames each growth run appends.
const growthFrames = 100000

var ingestSizes = []struct{ size, n int }{{200, 300000}, {2 << 10, 150000}, {64 << 10, 5000}}

// bench runs everything and writes the table to out, progress to log.
func bench(ctx context.Context, o options, out, log io.Writer) error {
	if o.cpuprofile != "" {
		stop, err := startProfile(o.cpuprofile)
		if err != nil {
			return err
		}
		defer stop()
		childProfile = o.cpuprofile
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if o.samples != "" {
		if err := os.MkdirAll(o.samples, 0o700); err != nil {
			return fmt.Errorf("-samples: %w", err)
		}
	}
	dir, err := os.MkdirTemp("", "mcpvcr-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	db, err := store.OpenWith(ctx, dir+"/record.db", recordOptions)
	if err != nil {
		return err
	}
	defer db.Close()

	t := &table{}
	if o.snoopBin != "" {
		if snoop, err = newSnoopPeer(ctx, o.snoopBin, dir); err != nil {
			return err
		}
		t.snoop = true
	}
	t.floor = floor
	startCPU := sampleCPU()
	if err := benchLoads(ctx, o, t, self, dir, db, log); err != nil {
		return err
	}
	if err := benchStore(ctx, o, t, dir, log); err != nil {
		return err
	}
	if err := benchRSS(ctx, o, t, self, dir, log); err != nil {
		return err
	}
	if err := benchStarts(ctx, o, t, dir, log); err != nil {
		return err
	}
	shared := ""
	if others, ok := othersShare(startCPU, sampleCPU()); ok {
		shared = fmt.Sprintf(", other processes used %.0f%% of the CPUs meanwhile", others*100)
	}
	if textWords {
		shared += ", payloads padded with words (-text words)"
	}
	fmt.Fprintf(out, "mcpvcr bench: %s, %s/%s, %d CPUs, %d rounds (medians), loopback%s\n\n",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), o.rounds, shared)
	t.write(out)
	return nil
}

// benchLoads measures the proxy loads -only selects into t.
func benchLoads(ctx context.Context, o options, t *table, self, dir string, db *store.DB, log io.Writer) error {
	for _, l := range loads {
		if !o.only.MatchString(l.name) {
			continue
		}
		if o.quick {
			l.n /= 5
		}
		rs, err := measure(ctx, o, l, self, dir, db, log)
		if err != nil {
			return fmt.Errorf("%s c=%d: %w", l.name, l.conc, err)
		}
		t.addLoad(l, rs)
	}
	return nil
}

// benchStore measures the store's ingest and growth into t, as far as
// -only selects them.
func benchStore(ctx context.Context, o options, t *table, dir string, log io.Writer) error {
	if o.only.MatchString("store ingest") {
		for _, sz := range ingestSizes {
			n := sz.n
			if o.quick {
				n /= 5
			}
			var xs []float64
			for i := range max(3, o.rounds/2+1) {
				fmt.Fprintf(log, "store ingest %d B: round %d\n", sz.size, i+1)
				x, err := ingest(ctx, dir, sz.size, n)
				if err != nil {
					return fmt.Errorf("ingest %d B: %w", sz.size, err)
				}
				xs = append(xs, x)
			}
			t.addIngest(sz.size, medianF(xs))
		}
	}
	if o.growthMB > 0 && o.only.MatchString("store growth") {
		n := growthFrames
		if o.quick {
			n /= 5
		}
		g, err := growth(ctx, dir, o.growthMB, 200, n, max(3, o.rounds/2+1), log)
		if err != nil {
			return fmt.Errorf("store growth: %w", err)
		}
		t.addGrowth(g)
	}
	return nil
}

// benchRSS measures the peak memory of passing and recording a large
// SSE stream into t, if -rss-mb asks and -only selects it.
func benchRSS(ctx context.Context, o options, t *table, self, dir string, log io.Writer) error {
	if o.rssMB <= 0 || !o.only.MatchString("rss peak memory") {
		return nil
	}
	var res [2]rssResult
	for i, mode := range []string{"pass", "record"} {
		fmt.Fprintf(log, "peak memory: %d MB SSE stream through %s\n", o.rssMB, mode)
		r, err := rssRun(ctx, self, dir, mode, int64(o.rssMB)<<20, o.rssEvent)
		if err != nil {
			return fmt.Errorf("peak memory through %s: %w", mode, err)
		}
		res[i] = r
	}
	t.addRSS(int64(o.rssMB)<<20, res[0], res[1])
	return nil
}

// httpStarts are the HTTP replay start loads: "replay start http",
// "replay start sse", "replay start http modern" (2026-07-28 exchanges)
// and "replay start http refused" (requests refused for their shape, by
// sessions without a session id).
var httpStarts = []string{"http", "sse", "http modern", "http refused"}

// benchStarts measures the replay start loads -only selects into t:
// "replay start stdio" and httpStarts; -only 'replay start' runs them
// all.
func benchStarts(ctx context.Context, o options, t *table, dir string, log io.Writer) error {
	startLoads := map[string]bool{}
	for _, k := range append([]string{"stdio"}, httpStarts...) {
		startLoads[k] = o.only.MatchString("replay start " + k)
	}
	if !slices.Contains(slices.Collect(maps.Values(startLoads)), true) {
		return nil
	}
	bin, err := buildMcpvcr(ctx, dir)
	if err != nil {
		return err
	}
	if startLoads["stdio"] {
		if err := benchStartStdio(ctx, o, t, bin, dir, log); err != nil {
			return err
		}
	}
	httpSizes := httpStartSessions
	if o.quick {
		httpSizes = quickHTTPStartSessions
	}
	for _, kind := range httpStarts {
		if !startLoads[kind] {
			continue
		}
		var rs []startResult
		for _, n := range httpSizes {
			r, err := replayStartHTTP(ctx, bin, dir, n, max(3, o.rounds), kind, log)
			if err != nil {
				return fmt.Errorf("replay start %s: %w", kind, err)
			}
			rs = append(rs, r)
		}
		t.addStart(rs)
	}
	return nil
}

// benchStartStdio measures "replay start stdio" into t, one row per
// set of match rules.
func benchStartStdio(ctx context.Context, o options, t *table, bin, dir string, log io.Writer) error {
	sizes := startSessions
	if o.quick {
		sizes = quickStartSessions
	}
	byRules := make([][]startResult, len(startRules))
	for _, n := range sizes {
		rs, err := replayStart(ctx, bin, dir, n, max(3, o.rounds), log)
		if err != nil {
			return fmt.Errorf("replay start: %w", err)
		}
		for i, r := range rs {
			byRules[i] = append(byRules[i], r)
		}
	}
	for _, rs := range byRules {
		t.addStart(rs)
	}
	return nil
}

// measure runs load l in every mode: a warm-up run each (the record one
// makes the recording replay serves), then o.rounds timed rounds.
func measure(ctx context.Context, o options, l load, self, dir string, db *store.DB, log io.Writer) (rs [numModes]rounds, err error) {
	var runOnce func(mode) (run, error)
	if l.stdio {
		b := &stdioBench{self: self, db: db}
		runOnce = func(m mode) (run, error) { return b.run(ctx, m, l.tool, l.n, l.conc) }
	} else {
		b, err := newHTTPBench(ctx, self, filepath.Join(dir, fmt.Sprintf("http-%s-c%d.db", strings.ReplaceAll(l.name, " ", "-"), l.conc)))
		if err != nil {
			return rs, err
		}
		defer func() {
			if cerr := b.close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		runOnce = func(m mode) (run, error) { return b.run(ctx, m, l.tool, l.n, l.conc) }
	}
	for _, m := range roundOrder(0) {
		fmt.Fprintf(log, "%s c=%d: warm-up %s\n", l.name, l.conc, m)
		if _, err := runOnce(m); err != nil {
			return rs, fmt.Errorf("warm-up %s: %w", m, err)
		}
	}
	for i := range o.rounds {
		for _, m := range roundOrder(i) {
			fmt.Fprintf(log, "%s c=%d: round %d %s\n", l.name, l.conc, i+1, m)
			// Label the samples of a -cpuprofile with the mode, for
			// go tool pprof -tagfocus mode=record: the load generator's
			// goroutines inherit it, and the stdio recorder's. HTTP
			// servers and proxies profile themselves (see child).
			var r run
			var err error
			pprof.Do(ctx, pprof.Labels("mode", m.String(), "load", l.name), func(context.Context) { r, err = runOnce(m) })
			if err != nil {
				return rs, fmt.Errorf("round %d %s: %w", i+1, m, err)
			}
			rs[m] = append(rs[m], r)
			if o.samples != "" {
				if err := writeSamples(o.samples, l, m, i+1, r); err != nil {
					return rs, fmt.Errorf("-samples: %w", err)
				}
			}
		}
		runtime.GC()
	}
	return rs, nil
}

// startProfile starts a CPU profile into path and returns its stop.
func startProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}
