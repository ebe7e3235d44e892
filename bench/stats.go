package main

import (
	"fmt"
	"slices"
	"time"
)

// run is what one timed run of a load measured.
type run struct {
	// lat holds each request's latency: from just before its first byte
	// was written to the arrival of its whole answer.
	lat []time.Duration
	// ttfe holds, for SSE, each request's time to its first event.
	ttfe []time.Duration
	// requests and frames count what was answered: frames are the server's
	// messages (SSE events, stdio lines) the client received.
	requests, frames int
	wall             time.Duration
	// cpu is the CPU time of the proxy (or replayer) process during the
	// run, where it is a process of its own; 0 otherwise.
	cpu time.Duration
	// lost counts the server frames a lossy proxy (mcpsnoop) did not
	// forward or did not record, cut the requests whose answers it cut.
	lost, cut int
}

// p50 returns the median latency of the run.
func (r run) p50() time.Duration { return median(r.lat) }

// p99 returns the 99th percentile of the run's latencies.
func (r run) p99() time.Duration { return quantile(r.lat, 0.99) }

// reqRate returns the requests answered per second.
func (r run) reqRate() float64 { return float64(r.requests) / r.wall.Seconds() }

// frameRate returns the server frames received per second.
func (r run) frameRate() float64 { return float64(r.frames) / r.wall.Seconds() }

// cpuPerFrame returns the proxy's CPU time per frame forwarded: the
// client's and the server's, each counted once.
func (r run) cpuPerFrame() time.Duration {
	if r.cpu == 0 {
		return 0
	}
	return r.cpu / time.Duration(r.requests+r.frames)
}

// median returns the median of ds, 0 for none. ds is sorted in place.
func median(ds []time.Duration) time.Duration { return quantile(ds, 0.5) }

// quantile returns the q quantile of ds (the value that a fraction q of
// them do not exceed), 0 for none. ds is sorted in place.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

// medianF returns the median of xs, 0 for none. xs is sorted in place.
func medianF(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return xs[len(xs)/2]
}

// rounds holds the runs of one mode over all rounds.
type rounds []run

// medianOf is the median over rounds of what of reads off each round.
func (rs rounds) medianOf(of func(run) time.Duration) time.Duration {
	ds := make([]time.Duration, 0, len(rs))
	for _, r := range rs {
		ds = append(ds, of(r))
	}
	return median(ds)
}

// cpuPerFrame is the median over rounds of the proxy's CPU time per
// frame.
func (rs rounds) cpuPerFrame() time.Duration {
	return rs.medianOf(func(r run) time.Duration { return r.cpuPerFrame() })
}

// p50 is the median over rounds of each round's median latency.
func (rs rounds) p50() time.Duration {
	return rs.medianOf(func(r run) time.Duration { return r.p50() })
}

// p99 is the median over rounds of each round's 99th percentile latency.
func (rs rounds) p99() time.Duration {
	return rs.medianOf(func(r run) time.Duration { return r.p99() })
}

// ttfe99 is the median over rounds of each round's 99th percentile time
// to first event.
func (rs rounds) ttfe99() time.Duration {
	return rs.medianOf(func(r run) time.Duration { return quantile(r.ttfe, 0.99) })
}

// ttfe is the median over rounds of each round's median time to first
// event.
func (rs rounds) ttfe() time.Duration {
	return rs.medianOf(func(r run) time.Duration { return median(r.ttfe) })
}

// reqRate is the median over rounds of requests per second.
func (rs rounds) reqRate() float64 {
	var xs []float64
	for _, r := range rs {
		xs = append(xs, r.reqRate())
	}
	return medianF(xs)
}

// frameRate is the median over rounds of server frames per second.
func (rs rounds) frameRate() float64 {
	var xs []float64
	for _, r := range rs {
		xs = append(xs, r.frameRate())
	}
	return medianF(xs)
}

// fmtDur prints a duration with three significant digits.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < 10*time.Microsecond:
		return fmt.Sprintf("%.2fµs", float64(d)/float64(time.Microsecond))
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// fmtRate prints a rate per second with a k or M suffix.
func fmtRate(x float64) string {
	switch {
	case x <= 0:
		return "-"
	case x >= 10e6:
		return fmt.Sprintf("%.1fM/s", x/1e6)
	case x >= 10e3:
		return fmt.Sprintf("%.0fk/s", x/1e3)
	}
	return fmt.Sprintf("%.0f/s", x)
}

// fmtRatio prints a ratio as "1.07×", "-" when undefined.
func fmtRatio(x float64) string {
	if x <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f×", x)
}

// fmtMB prints a byte count in MiB.
func fmtMB(n int64) string {
	return fmt.Sprintf("%.1fMB", float64(n)/(1<<20))
}
