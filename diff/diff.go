package diff

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/store"
)

// Compare compares the answers of two recorded sessions, request by request:
// old is the expectation, new the run under test. Client requests are
// paired in order by method and normalised params; each pair's answers
// (result or error, and progress notifications) are compared, and so is
// what the server sent on its own (requests and notifications, per
// method). The polls of a task the client created (tasks/get) are not
// paired: per task, the sequence of distinct states they saw and the
// last answer are compared. noise says what does not count; its defaults
// always apply.
func Compare(old, new *store.Recording, noise Noise) *Report {
	return compare(converse(old), converse(new), infoOf(old), infoOf(new), noise)
}

// compare is Compare on the conversations of the two sessions, for a
// caller that has them already (Learn).
func compare(a, b *conversation, oldInfo, newInfo SessionInfo, noise Noise) *Report {
	r := &Report{Old: oldInfo, New: newInfo}
	// The polls of tasks the client created are compared per task (see
	// tasks.go), not paired.
	tasksA, pollsA := tasksOf(a)
	tasksB, pollsB := tasksOf(b)
	pairs := pairExcept(a.exchanges, b.exchanges, pollsA, pollsB)
	used := make([]bool, len(b.exchanges))
	polled := map[int]RequestDiff{}
	for i, t := range tasksA {
		if j := pairs[i]; j >= 0 && tasksB[j] != nil {
			for k, rd := range compareTask(a, b, t, tasksB[j], noise) {
				polled[k] = rd
			}
			for _, k := range tasksB[j].polls {
				used[k] = true
			}
		}
	}
	for i, x := range a.exchanges {
		if rd, ok := polled[i]; ok {
			r.Requests = append(r.Requests, rd)
			continue
		}
		rd := RequestDiff{Seq: x.seq, Method: x.method, Name: x.name}
		if noise.covers(x.scope(), nil) {
			rd.Status = StatusSame
			if j := pairs[i]; j >= 0 {
				used[j], rd.NewSeq = true, b.exchanges[j].seq
			}
			r.Requests = append(r.Requests, rd)
			continue
		}
		j := pairs[i]
		if j < 0 && pollsA[i] {
			rd.Status = StatusMissing
			rd.Reason = "the new session did not poll this task"
			r.Requests = append(r.Requests, rd)
			continue
		}
		if j < 0 {
			rd.Status = StatusMissing
			rd.Reason = "the new session did not send this request"
			r.Requests = append(r.Requests, rd)
			continue
		}
		used[j] = true
		y := b.exchanges[j]
		rd.NewSeq = y.seq
		rd.Status, rd.Reason, rd.Changes = compareExchange(x, y, noise)
		r.Requests = append(r.Requests, rd)
	}
	for j, y := range b.exchanges {
		if !used[j] {
			why := "only the new session sent this request"
			if pollsB[j] {
				why = "only the new session polled this task"
			}
			r.Requests = append(r.Requests, RequestDiff{NewSeq: y.seq, Method: y.method, Name: y.name, Status: StatusExtra,
				Reason: why})
		}
	}
	if !a.server.empty() || !b.server.empty() {
		sd := RequestDiff{Status: StatusSame}
		av, bv := a.server.value(), b.server.value()
		if ch := compareValues(scope{}, av, bv, noise); len(ch) > 0 {
			// Only what differs counts: a message both sessions hold
			// alike, placed on one clock inside the other's end and
			// not the other way round, says nothing.
			keep := differing(av, bv, noise)
			ta, tb := a.certain(b), b.certain(a)
			if ca, cb := only(ta.value(), keep), only(tb.value(), keep); len(compareValues(scope{}, ca, cb, noise)) == 0 {
				r.Notes = append(r.Notes, tailNote(ch))
			} else {
				sd.Status, sd.Changes = StatusChanged, ch
			}
		}
		r.Server = &sd
	}
	return r
}

// compareExchange compares one pair of exchanges.
func compareExchange(x, y *exchange, noise Noise) (Status, string, []Change) {
	xv, yv := x.value(), y.value()
	switch {
	case x.answered() && !y.answered() && !(x.cancelled || y.cancelled):
		return StatusUnanswered, "no answer in the new session", nil
	case x.answered() != y.answered():
		// A cancelled request may or may not be answered.
		for _, k := range []string{"result", "error"} {
			delete(xv, k)
			delete(yv, k)
		}
	}
	if ch := compareValues(x.scope(), xv, yv, noise); len(ch) > 0 {
		return StatusChanged, "", ch
	}
	return StatusSame, "", nil
}

// compareValues compares two normalised values with go-cmp and returns
// their differences, leaving out those the noise covers.
func compareValues(sc scope, x, y any, noise Noise) []Change {
	rep := &changeReporter{}
	ignore := cmp.FilterPath(func(p cmp.Path) bool {
		return noise.covers(sc, segments(p))
	}, cmp.Ignore())
	cmp.Equal(x, y, ignore, cmp.Reporter(rep))
	return rep.changes
}

// changeReporter collects go-cmp's unequal leaves as Changes.
type changeReporter struct {
	path    cmp.Path
	changes []Change
}

// PushStep is called by go-cmp as it descends.
func (r *changeReporter) PushStep(ps cmp.PathStep) { r.path = append(r.path, ps) }

// PopStep is called by go-cmp as it ascends.
func (r *changeReporter) PopStep() { r.path = r.path[:len(r.path)-1] }

// Report records a leaf that differs.
func (r *changeReporter) Report(rs cmp.Result) {
	if rs.Equal() || rs.ByIgnore() {
		return
	}
	segs := segments(r.path)
	vx, vy := r.path.Last().Values()
	c := Change{Path: formatSegs(segs), Kind: Changed}
	switch {
	case !validValue(vx):
		c.Kind = Added
	case !validValue(vy):
		c.Kind = Removed
	}
	if validValue(vx) {
		c.Old = jsonOf(vx.Interface())
	}
	if validValue(vy) {
		c.New = jsonOf(vy.Interface())
	}
	r.changes = append(r.changes, c)
}

func validValue(v reflect.Value) bool { return v.IsValid() }

// jsonOf renders a normalised value for the report.
func jsonOf(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(denormalize(v)) != nil {
		return nil
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

var keyedListType = reflect.TypeOf(keyedList{})

// segments turns a go-cmp path into path segments. For list elements the
// index is the old one, or the new one for an added element.
func segments(p cmp.Path) []pathSeg {
	var segs []pathSeg
	for i, ps := range p {
		switch s := ps.(type) {
		case cmp.MapIndex:
			k := s.Key().String()
			if i > 0 && p[i-1].Type() == keyedListType {
				segs = append(segs, pathSeg{Kind: segKeyed, Key: k})
			} else {
				segs = append(segs, pathSeg{Kind: segKey, Key: k})
			}
		case cmp.SliceIndex:
			ix, iy := s.SplitKeys()
			n := ix
			if n < 0 {
				n = iy
			}
			segs = append(segs, pathSeg{Kind: segIndex, Index: n})
		}
	}
	return segs
}

// tailNote says what differs, ch, of what the server sent on its own
// only where timing decides it (see conversation.certain): it is noted,
// not counted as a difference.
func tailNote(ch []Change) string {
	var parts []string
	for _, c := range ch {
		parts = append(parts, string(c.Kind)+" "+c.Path)
	}
	return "what the server sent on its own differs only at or after the end of one of the sessions (" + strings.Join(parts, "; ") +
		"): that session cannot say whether it would have come, so it is not counted as a difference"
}

// differing returns, per kind of server traffic ("requests",
// "notifications"), the methods whose messages differ between the
// values av and bv of two sessions' traffic.
func differing(av, bv map[string]any, noise Noise) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	for _, kind := range []string{"requests", "notifications"} {
		am, _ := av[kind].(map[string]any)
		bm, _ := bv[kind].(map[string]any)
		out[kind] = map[string]bool{}
		for method := range union(am, bm) {
			x := map[string]any{kind: map[string]any{method: am[method]}}
			y := map[string]any{kind: map[string]any{method: bm[method]}}
			if len(compareValues(scope{}, x, y, noise)) > 0 {
				out[kind][method] = true
			}
		}
	}
	return out
}

// only returns the value v of traffic with the methods of keep alone.
func only(v map[string]any, keep map[string]map[string]bool) map[string]any {
	out := map[string]any{}
	for kind, byMethod := range v {
		m, _ := byMethod.(map[string]any)
		kept := map[string]any{}
		for method, items := range m {
			if keep[kind][method] {
				kept[method] = items
			}
		}
		out[kind] = kept
	}
	return out
}

// union returns the keys of a and b.
func union(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}
