package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// writeSamples appends the requests of one timed run of load l in mode m
// to a file of dir named for the load and the mode (-samples): a line
// per request, round, request, latency and time to the first SSE event
// in µs (the last empty for JSON and stdio). A median hides the shape
// of what it sums up; the time to the first event at c=1, for one, has
// two modes, and its median moves between them from run to run
// (docs/performance.md, fourteenth round).
func writeSamples(dir string, l load, m mode, round int, r run) error {
	name := fmt.Sprintf("%s-c%d-%s.tsv", strings.ReplaceAll(l.name, " ", "-"), l.conc, m)
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if st, err := f.Stat(); err == nil && st.Size() == 0 {
		fmt.Fprintln(w, "round\trequest\tlatency_us\tfirst_event_us")
	}
	for i, d := range r.lat {
		first := ""
		if r.ttfe != nil {
			first = fmt.Sprint(r.ttfe[i].Microseconds())
		}
		fmt.Fprintf(w, "%d\t%d\t%d\t%s\n", round, i+1, d.Microseconds(), first)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
