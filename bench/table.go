package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// row is one line of the table. Ratios are record and replay over
// passthrough; target says which target the row checks and whether it
// was met.
type row struct {
	load, conc, metric string
	vals               [numModes]string
	rec, rep, snp, flr string
	target             string
}

// table collects the rows and counts the targets met and missed.
type table struct {
	rows        []row
	met, missed int
	// snoop adds the mcpsnoop columns: its value, its ratio to
	// passthrough, and the frames lost.
	snoop bool
	// floor adds the columns of record into nothing (-floor): its value
	// and its ratio to passthrough. No target is checked on them.
	floor bool
}

// check formats a target: what it asks, the measured value, and met or
// MISSED; n/a when a ratio it needs could not be computed (0).
func (t *table) check(ok bool, format string, args ...any) string {
	s := fmt.Sprintf(format, args...)
	for _, a := range args {
		if x, isRatio := a.(float64); isRatio && x == 0 {
			return s + ": n/a"
		}
	}
	if ok {
		t.met++
		return s + ": met"
	}
	t.missed++
	return s + ": MISSED"
}

// ratio returns a/b, or 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// durRow adds a row of durations, ratios to passthrough, and a target
// (empty for none).
func (t *table) durRow(l load, metric string, d [numModes]time.Duration, target string) {
	r := row{load: l.name, conc: fmt.Sprint(l.conc), metric: metric, target: target}
	for m := range numModes {
		r.vals[m] = fmtDur(d[m])
	}
	r.rec = fmtRatio(ratio(float64(d[modeRecord]), float64(d[modePassthrough])))
	r.rep = fmtRatio(ratio(float64(d[modeReplay]), float64(d[modePassthrough])))
	r.snp = fmtRatio(ratio(float64(d[modeSnoop]), float64(d[modePassthrough])))
	r.flr = fmtRatio(ratio(float64(d[modeFloor]), float64(d[modePassthrough])))
	t.rows = append(t.rows, r)
}

// rateRow adds a row of rates per second.
func (t *table) rateRow(l load, metric string, x [numModes]float64, target string) {
	r := row{load: l.name, conc: fmt.Sprint(l.conc), metric: metric, target: target}
	for m := range numModes {
		r.vals[m] = fmtRate(x[m])
	}
	r.rec = fmtRatio(ratio(x[modeRecord], x[modePassthrough]))
	r.rep = fmtRatio(ratio(x[modeReplay], x[modePassthrough]))
	r.snp = fmtRatio(ratio(x[modeSnoop], x[modePassthrough]))
	r.flr = fmtRatio(ratio(x[modeFloor], x[modePassthrough]))
	t.rows = append(t.rows, r)
}

// addLoad adds the rows of one load and checks its targets, those of
// issue 15: HTTP JSON p50 at c=1 ≤1.05× the passthrough and requests/s
// at c=8 ≥0.85×; SSE events/s at c=8 ≥0.80× with every frame recorded
// (the record run fails otherwise) and the first event at c=1 no more
// than 50 µs after the passthrough's; stdio JSON p50 at c=1 ≤1.10×.
func (t *table) addLoad(l load, rs [numModes]rounds) {
	var p50, p99, ttfe, ttfe99 [numModes]time.Duration
	var reqs, frames [numModes]float64
	for m := range numModes {
		p50[m], ttfe[m] = rs[m].p50(), rs[m].ttfe()
		p99[m], ttfe99[m] = rs[m].p99(), rs[m].ttfe99()
		reqs[m], frames[m] = rs[m].reqRate(), rs[m].frameRate()
	}
	recLat := ratio(float64(p50[modeRecord]), float64(p50[modePassthrough]))
	sse := !l.stdio && l.tool == toolStream
	// ahead checks issue 26's target on a row: record ahead of mcpsnoop,
	// each as a ratio to the passthrough (lower is better for latency).
	ahead := func(target string, rec, snp float64, lower bool) string {
		if !t.snoop {
			return target
		}
		ok := rec > snp
		if lower {
			ok = rec < snp
		}
		s := t.check(ok && snp > 0, "ahead of mcpsnoop (%.3g× vs %.3g×)", rec, snp)
		if target == "" {
			return s
		}
		return target + "; " + s
	}
	if t.snoop {
		defer t.lostRow(l, rs)
	}
	if !l.stdio {
		defer func() {
			var cpu [numModes]time.Duration
			for m := range numModes {
				cpu[m] = rs[m].cpuPerFrame()
			}
			t.durRow(l, "proxy CPU/frame", cpu, "")
		}()
	}
	switch {
	case sse:
		t.durRow(l, "p50 whole answer", p50, "")
		target := ""
		if l.conc == 1 {
			extra := ttfe[modeRecord] - ttfe[modePassthrough]
			target = t.check(extra <= 50*time.Microsecond && ttfe[modePassthrough] > 0,
				"record ≤ passthrough+50µs (%+dµs)", extra.Microseconds())
			if t.snoop {
				snp := ttfe[modeSnoop] - ttfe[modePassthrough]
				target += "; " + t.check(extra < snp && ttfe[modeSnoop] > 0, "ahead of mcpsnoop (%+dµs)", snp.Microseconds())
			}
		}
		t.durRow(l, "p50 first event", ttfe, target)
		t.durRow(l, "p99 first event", ttfe99, "")
		rf := ratio(frames[modeRecord], frames[modePassthrough])
		live := ratio(frames[modeReplay], frames[modeDirect])
		target = t.check(live >= 1.5, "replay ≥1.50× direct (%.3g×)", live)
		if l.conc > 1 {
			target = ahead(t.check(rf >= 0.80, "record ≥0.80× (%.3g×), all recorded", rf), rf, ratio(frames[modeSnoop], frames[modePassthrough]), false) + "; " + target
		}
		t.rateRow(l, "events/s", frames, target)
	case l.stdio:
		target := ""
		if l.conc == 1 && l.tool != toolStream {
			target = t.check(recLat <= 1.10, "record ≤1.10× (%.3g×)", recLat)
			target = ahead(target, recLat, ratio(float64(p50[modeSnoop]), float64(p50[modePassthrough])), true)
		}
		t.durRow(l, "p50 latency", p50, target)
		t.durRow(l, "p99 latency", p99, "")
		target = ""
		if l.tool == toolStream {
			if l.conc > 1 {
				target = ahead("", ratio(frames[modeRecord], frames[modePassthrough]), ratio(frames[modeSnoop], frames[modePassthrough]), false)
			}
			t.rateRow(l, "lines/s", frames, target)
		} else {
			if l.conc > 1 {
				target = ahead("", ratio(reqs[modeRecord], reqs[modePassthrough]), ratio(reqs[modeSnoop], reqs[modePassthrough]), false)
			}
			t.rateRow(l, "requests/s", reqs, target)
		}
	default:
		target := ""
		if l.conc == 1 {
			target = t.check(recLat <= 1.05, "record ≤1.05× (%.3g×)", recLat)
			target = ahead(target, recLat, ratio(float64(p50[modeSnoop]), float64(p50[modePassthrough])), true)
		}
		t.durRow(l, "p50 latency", p50, target)
		t.durRow(l, "p99 latency", p99, "")
		target = ""
		if l.conc > 1 {
			rr := ratio(reqs[modeRecord], reqs[modePassthrough])
			target = ahead(t.check(rr >= 0.85, "record ≥0.85× (%.3g×)", rr), rr, ratio(reqs[modeSnoop], reqs[modePassthrough]), false)
		}
		t.rateRow(l, "requests/s", reqs, target)
	}
}

// lostRow adds the frames lost by each proxy over all rounds: those
// the client did not get and those missing from the recording. A record
// run fails on any, so its count is 0; mcpsnoop's are counted.
func (t *table) lostRow(l load, rs [numModes]rounds) {
	r := row{load: l.name, conc: fmt.Sprint(l.conc), metric: "frames lost", rec: "-", rep: "-", snp: "-"}
	for m := range numModes {
		r.vals[m] = "-"
	}
	r.vals[modeRecord] = "0"
	var lost, cut, hit int
	for _, x := range rs[modeSnoop] {
		lost += x.lost
		cut += x.cut
		if x.lost > 0 {
			hit++
		}
	}
	r.vals[modeSnoop] = fmt.Sprint(lost)
	r.target = fmt.Sprintf("mcpsnoop: %d answers cut, frames lost in %d of %d rounds", cut, hit, len(rs[modeSnoop]))
	t.rows = append(t.rows, r)
}

// addIngest adds a store ingest row.
func (t *table) addIngest(size int, rate float64) {
	r := row{load: "store ingest", conc: "1", metric: fmt.Sprintf("%s frames/s", fmtSize(size))}
	for m := range numModes {
		r.vals[m] = "-"
	}
	r.vals[modeRecord], r.rec, r.rep = fmtRate(rate), "-", "-"
	switch size {
	case 200:
		r.target = t.check(rate >= 150e3, "≥150k/s (%.3g×)", rate/150e3)
	case 2 << 10:
		r.target = t.check(rate >= 60e3, "≥60k/s (%.3g×)", rate/60e3)
	}
	t.rows = append(t.rows, r)
}

// addGrowth adds the rows of the growth measurement: ingest into a big
// cassette against a new one, and the size of a cassette per recorded
// byte.
func (t *table) addGrowth(g growthResult) {
	dash := func(r *row) {
		for m := range numModes {
			r.vals[m] = "-"
		}
		r.rec, r.rep = "-", "-"
	}
	r := row{load: "store growth", conc: "1", metric: "200B frames/s, new"}
	dash(&r)
	r.vals[modeRecord] = fmtRate(g.empty)
	t.rows = append(t.rows, r)
	r = row{load: "store growth", conc: "1", metric: fmt.Sprintf("200B frames/s, %.0fMB", g.bigMB)}
	dash(&r)
	r.vals[modeRecord] = fmtRate(g.big)
	gr := ratio(g.big, g.empty)
	r.target = t.check(gr >= 0.80, "≥0.80× of new (%.3g×), into %d frames", gr, g.bigFrames)
	t.rows = append(t.rows, r)
	r = row{load: "store growth", conc: "1", metric: "cassette B per frame B"}
	dash(&r)
	r.vals[modeRecord] = fmt.Sprintf("%.2f", g.bytesPerRaw)
	r.target = "200 B lines; the file after Close"
	t.rows = append(t.rows, r)
}

// addRSS adds the peak-memory rows for a stream of about total bytes.
func (t *table) addRSS(total int64, pass, rec rssResult) {
	size := fmtSize(int(total))
	r := row{load: "sse " + size + " stream", conc: "1", metric: "peak RSS (VmHWM)"}
	for m := range numModes {
		r.vals[m] = "-"
	}
	r.vals[modePassthrough], r.vals[modeRecord] = fmtMB(pass.peak), fmtMB(rec.peak)
	r.rec, r.rep = fmtRatio(ratio(float64(rec.peak), float64(pass.peak))), "-"
	note := ""
	if total < 1<<30 {
		note = fmt.Sprintf("; a %s run, -rss-mb 1024 for 1 GB", size)
	}
	r.target = t.check(rec.peak < 64<<20, "record <64MB (%.3g×%s)", float64(rec.peak)/(64<<20), note)
	t.rows = append(t.rows, r)
	r = row{load: "sse " + size + " stream", conc: "1", metric: "MB/s forwarded"}
	for m := range numModes {
		r.vals[m] = "-"
	}
	mbs := func(x rssResult) float64 { return float64(x.bytes) / (1 << 20) / x.wall.Seconds() }
	r.vals[modePassthrough] = fmt.Sprintf("%.0f", mbs(pass))
	r.vals[modeRecord] = fmt.Sprintf("%.0f", mbs(rec))
	r.rec, r.rep = fmtRatio(ratio(mbs(rec), mbs(pass))), "-"
	r.target = fmt.Sprintf("%d of %d events recorded", rec.recorded-1, rec.events)
	t.rows = append(t.rows, r)
}

// fmtSize prints a byte count as B, KB, MB or GB.
func fmtSize(n int) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%dMB", n>>20)
	case n >= 1<<10:
		return fmt.Sprintf("%dKB", n>>10)
	}
	return fmt.Sprintf("%dB", n)
}

// write prints the table and a line counting the targets. The floor's
// and mcpsnoop's columns are there only when they ran.
func (t *table) write(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	line := func(r row) {
		cols := []string{r.load, r.conc, r.metric, r.vals[modeDirect], r.vals[modePassthrough]}
		if t.floor {
			cols = append(cols, r.vals[modeFloor])
		}
		cols = append(cols, r.vals[modeRecord], r.vals[modeReplay])
		if t.snoop {
			cols = append(cols, r.vals[modeSnoop])
		}
		if t.floor {
			cols = append(cols, r.flr)
		}
		cols = append(cols, r.rec, r.rep)
		if t.snoop {
			cols = append(cols, r.snp)
		}
		cols = append(cols, r.target)
		for i, c := range cols {
			cols[i] = dashIfEmpty(c)
		}
		fmt.Fprintln(tw, strings.Join(cols, "\t"))
	}
	head := row{load: "LOAD", conc: "C", metric: "METRIC", rec: "REC/PASS", rep: "REP/PASS", snp: "SNOOP/PASS", flr: "FLOOR/PASS", target: "TARGET"}
	for m := range numModes {
		head.vals[m] = strings.ToUpper(modeNames[m])
	}
	line(head)
	for _, r := range t.rows {
		line(r)
	}
	tw.Flush()
	fmt.Fprintf(w, "\ntargets: %d met, %d missed\n", t.met, t.missed)
}

func dashIfEmpty(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
