package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteSamples: each run's requests are appended under one header,
// the time to the first event only for SSE.
func TestWriteSamples(t *testing.T) {
	dir := t.TempDir()
	sse := load{name: "http sse 100ev", tool: toolStream, conc: 1}
	json := load{name: "http json 2KB", tool: toolBig, conc: 8}
	runs := []struct {
		l     load
		round int
		r     run
	}{
		{sse, 1, run{lat: []time.Duration{1500 * time.Microsecond, 2 * time.Millisecond}, ttfe: []time.Duration{400 * time.Microsecond, 1100 * time.Microsecond}}},
		{sse, 2, run{lat: []time.Duration{1600 * time.Microsecond}, ttfe: []time.Duration{500 * time.Microsecond}}},
		{json, 1, run{lat: []time.Duration{90 * time.Microsecond}}},
	}
	for _, x := range runs {
		if err := writeSamples(dir, x.l, modeRecord, x.round, x.r); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{
		"http-sse-100ev-c1-record.tsv": "round\trequest\tlatency_us\tfirst_event_us\n1\t1\t1500\t400\n1\t2\t2000\t1100\n2\t1\t1600\t500\n",
		"http-json-2KB-c8-record.tsv":  "round\trequest\tlatency_us\tfirst_event_us\n1\t1\t90\t\n",
	} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s:\n%s\nwant:\n%s", name, got, want)
		}
	}
}
