package replayer

import (
	"bytes"
	"hash/maphash"
	"slices"
)

// emit returns, in order, the queued frames every candidate agrees on and
// takes them off the queues (stdio). A frame goes when it heads the queue
// of a candidate (the first, in recorded order, whose head will do) and
// every other candidate has released it too, anywhere in its queue. So
// candidates whose servers sent the same frames in another order (a
// progress notification and a server request racing, as
// server-everything's do) go on agreeing, and the client gets them in an
// order one of them recorded, step by step, instead of nothing until
// settle picks one of them, which may be the wrong one when what tells
// them apart (the client's cancellation, say) comes only after those
// frames.
func (c *cursor) emit() []outFrame {
	c.mu.Lock()
	defer c.mu.Unlock()
	log := c.emitted.keep(c.cands)
	var outs []outFrame
	if len(c.cands) == 1 {
		lead := c.cands[0]
		for _, o := range lead.queue {
			log.note(o.Data, true)
		}
		outs = append(outs, lead.queue...)
		lead.queue = nil
	}
	var at []int
	if len(c.cands) > 1 {
		at = make([]int, len(c.cands))
	}
	for len(c.cands) > 1 && c.commonHead(at) {
		o := c.cands[0].queue[at[0]]
		head := true
		for i, e := range c.cands {
			if at[i] == 0 {
				e.queue = e.queue[1:]
			} else {
				e.queue, head = slices.Delete(e.queue, at[i], at[i]+1), false
			}
		}
		log.note(o.Data, head)
		outs = append(outs, o)
	}
	kept := outs[:0]
	for _, o := range outs {
		if c.sent(o) {
			kept = append(kept, o)
		}
	}
	return kept
}

// commonHead finds the first candidate whose queue's head every
// candidate has queued, and sets at[i] to where candidate i holds it. It
// reports false when there is none. c.mu must be held.
//
// A candidate that queued other frames before that head must find each of
// them still to come from the candidate it heads: then the client gets
// them after it, as that candidate recorded. A frame only some recorded
// (a log line one server sent before its answer) keeps the answer back
// until the candidates are told apart, as when they disagree at the head.
func (c *cursor) commonHead(at []int) bool {
	for _, h := range c.cands {
		if len(h.queue) == 0 {
			continue
		}
		head := h.queue[0].Data
		all := true
		for i, e := range c.cands {
			at[i] = queued(e.queue, head)
			if at[i] < 0 || at[i] > 0 && !h.toCome(e.queue[:at[i]]) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// maxToCome bounds how far toCome looks among a candidate's server frames
// not yet released.
const maxToCome = 256

// toCome reports whether every frame of outs is one e has still to send
// after the head of its queue: queued behind it, or among its next
// maxToCome server frames not yet released (their payloads rewritten as
// release would).
func (e *engine) toCome(outs []outFrame) bool {
	var later [][]byte
	for _, o := range e.queue[1:] {
		later = append(later, o.Data)
	}
	for i := e.lo; i < len(e.frames) && len(later) < len(e.queue)-1+maxToCome; i++ {
		if fr := &e.frames[i]; !fr.C2S && !e.done.has(i) {
			d, _ := e.rewrite(fr)
			later = append(later, d)
		}
	}
	for _, o := range outs {
		k := slices.IndexFunc(later, func(d []byte) bool { return bytes.Equal(d, o.Data) })
		if k < 0 {
			return false
		}
		later = slices.Delete(later, k, k+1) // each frame of e stands for one of outs
	}
	return true
}

// queued returns the index of the first frame of q whose payload is
// data, or -1.
func queued(q []outFrame, data []byte) int {
	if len(q) > 0 && bytes.Equal(q[0].Data, data) {
		return 0 // where candidates agree: every frame found at once
	}
	return slices.IndexFunc(q, func(o outFrame) bool { return bytes.Equal(o.Data, data) })
}

// emitLog is what went out of a cursor's queues, for bring, which loads a
// session a candidate stood for and must queue only what its released
// frames hold beyond that. As long as every frame that went out headed
// every candidate's queue, what went out is a prefix of every session's
// released frames, and a count says it; from the first that did not, the
// payloads' hashes are kept too, while a candidate stands for sessions
// not loaded yet (once none does, bring is never called again: the
// tree's nodes only ever split).
type emitLog struct {
	inOrder   int // frames that went out before the first out of order
	reordered bool
	after     []uint64 // hashes of the payloads that went out since
	seed      maphash.Seed
	off       bool // no candidate stands for sessions not loaded
}

// keep turns l off when no candidate of cands stands for sessions not
// loaded yet, and returns l.
func (l *emitLog) keep(cands []*engine) *emitLog {
	if !l.off && !slices.ContainsFunc(cands, func(e *engine) bool { return e.node != nil && e.node.Size > 1 }) {
		l.off, l.after = true, nil
	}
	return l
}

// note records that a frame of payload data went out; head reports that
// it headed every candidate's queue.
func (l *emitLog) note(data []byte, head bool) {
	switch {
	case !head && !l.reordered:
		l.reordered, l.seed = true, maphash.MakeSeed()
	case !l.reordered:
		l.inOrder++
		return
	}
	if !l.off {
		l.after = append(l.after, maphash.Bytes(l.seed, data))
	}
}

// unsent returns outs, the frames a loaded session released so far in
// its order, without those that went out already: the first inOrder, then
// for each payload that went out since, the first equal frame left.
func (l *emitLog) unsent(outs []outFrame) []outFrame {
	outs = outs[min(l.inOrder, len(outs)):]
	if len(l.after) == 0 {
		return outs
	}
	gone := make([]bool, len(outs))
	lo := 0 // outs before lo are all gone
	for _, h := range l.after {
		for lo < len(outs) && gone[lo] {
			lo++
		}
		for k := lo; k < len(outs); k++ {
			if !gone[k] && maphash.Bytes(l.seed, outs[k].Data) == h {
				gone[k] = true
				break
			}
		}
	}
	kept := make([]outFrame, 0, len(outs))
	for k, o := range outs {
		if !gone[k] {
			kept = append(kept, o)
		}
	}
	return kept
}
