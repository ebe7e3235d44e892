package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTable_Columns holds each mode's value and ratio under its own
// heading, with and without the optional columns of -floor and -mcpsnoop.
func TestTable_Columns(t *testing.T) {
	var rates [numModes]float64
	rates[modeDirect], rates[modePassthrough], rates[modeRecord] = 5000, 1000, 800
	rates[modeReplay], rates[modeSnoop], rates[modeFloor] = 2000, 600, 900
	for _, c := range []struct {
		floor, snoop bool
		want         map[string]string
	}{
		{false, false, map[string]string{"RECORD": "800/s", "REC/PASS": "0.80×", "REP/PASS": "2.00×"}},
		{true, false, map[string]string{"FLOOR": "900/s", "FLOOR/PASS": "0.90×", "RECORD": "800/s", "REC/PASS": "0.80×"}},
		{false, true, map[string]string{"MCPSNOOP": "600/s", "SNOOP/PASS": "0.60×", "REC/PASS": "0.80×"}},
		{true, true, map[string]string{"FLOOR": "900/s", "FLOOR/PASS": "0.90×", "MCPSNOOP": "600/s", "SNOOP/PASS": "0.60×", "REPLAY": "2000/s", "REC/PASS": "0.80×"}},
	} {
		tb := &table{floor: c.floor, snoop: c.snoop}
		tb.rateRow(load{name: "x", conc: 8}, "events/s", rates, "")
		var out strings.Builder
		tb.write(&out)
		lines := strings.Split(out.String(), "\n")
		head, vals := strings.Fields(lines[0]), strings.Fields(lines[1])
		if len(head) != len(vals) {
			t.Fatalf("floor=%v snoop=%v: %d headings, %d values:\n%s", c.floor, c.snoop, len(head), len(vals), out.String())
		}
		got := map[string]string{}
		for i, h := range head {
			got[h] = vals[i]
		}
		for h := range got {
			if _, ok := c.want[h]; !ok {
				delete(got, h)
			}
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("floor=%v snoop=%v (-want +got):\n%s\n%s", c.floor, c.snoop, diff, out.String())
		}
		if has := strings.Contains(lines[0], "FLOOR"); has != c.floor {
			t.Errorf("floor=%v snoop=%v: FLOOR shown %v", c.floor, c.snoop, has)
		}
		if has := strings.Contains(lines[0], "MCPSNOOP"); has != c.snoop {
			t.Errorf("floor=%v snoop=%v: MCPSNOOP shown %v", c.floor, c.snoop, has)
		}
	}
}
