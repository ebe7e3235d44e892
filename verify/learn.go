package verify

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/causal"
	"github.com/mcpvcr/mcpvcr/store"
)

// disorder finds where a verify run stopped following the recorded causal
// order: the first client frame of the run that went out while an earlier
// one was in flight which the recorded client had completed by then (so
// the server may have seen them in another order). It returns the seq,
// in the expected recording, of that frame and why; 0 if the run kept the
// recorded order. Frames are matched by position among the client's
// frames that are not answers to server requests. em is the expected
// recording's causal model, which the caller has (the plan's).
func disorder(em *causal.Model, run *store.Recording) (int64, string) {
	rm := causal.New(run)
	es, rs := steps(em), steps(rm)
	pos := func(m *causal.Model, sends []int) map[int]int {
		out := map[int]int{}
		for p, s := range sends {
			out[s] = p
		}
		return out
	}
	epos, rpos := pos(em, es), pos(rm, rs)
	for p, s := range es {
		if p >= len(rs) {
			return 0, "" // the run sent fewer frames: reported as missing, not disordered
		}
		ef, rf := em.Sends[s], rm.Sends[rs[p]]
		if method(em, ef) != method(rm, rf) {
			return ef.Frame.Seq, fmt.Sprintf("the run sent %s where the recording had %s", method(rm, rf), method(em, ef))
		}
		overlaps := map[int]bool{}
		for _, o := range rf.Overlaps {
			if q, ok := rpos[o]; ok {
				overlaps[q] = true
			}
		}
		for _, a := range ef.Awaited {
			if q, ok := epos[a]; ok && overlaps[q] {
				return ef.Frame.Seq, fmt.Sprintf("the run sent seq %d while seq %d was in flight; the recorded client had waited for it", ef.Frame.Seq, em.Sends[a].Frame.Seq)
			}
		}
	}
	return 0, ""
}

// steps returns the indexes of m's sends that are not answers to server
// requests nor polls of verify's own (see tasks.go), in order.
func steps(m *causal.Model) []int {
	var out []int
	for i, s := range m.Sends {
		if !m.Responses(s) && !strings.HasPrefix(string(m.Msgs[s.Msgs[0]].M.ID), ownPoll) {
			out = append(out, i)
		}
	}
	return out
}

// method names a send by its first message's method.
func method(m *causal.Model, s causal.Send) string {
	return m.Msgs[s.Msgs[0]].M.Method
}

// untainted returns the paths of learned that do not come from requests
// at or after seq from (recorded seqs), nor from the server's own
// traffic, when from is not 0: differences an ordering the recording did
// not have may have made.
func untainted(learned diff.Noise, from int64) (keep, dropped diff.Noise) {
	if from == 0 {
		return learned, diff.Noise{}
	}
	for _, p := range learned.Paths {
		seq, err := strconv.ParseInt(trimHash(p.Scope), 10, 64)
		if (err == nil && seq < from) || (err != nil && p.Scope != "server") {
			keep.Paths = append(keep.Paths, p)
			continue
		}
		dropped.Paths = append(dropped.Paths, p)
	}
	return keep, dropped
}

func trimHash(s string) string {
	if len(s) > 0 && s[0] == '#' {
		return s[1:]
	}
	return "x"
}
