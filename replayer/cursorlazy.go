package replayer

import (
	"errors"
	"fmt"
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/match"
	"github.com/mcpvcr/mcpvcr/internal/replayindex"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// split parts e's node where its members part ways (at its shared
// frames): e keeps the child holding its own session, and each other
// child gets an engine of its own, loaded and brought to e's state by
// replaying the client's frames so far (history) and dropping the
// released frames that went out already (emitted). When live is not nil,
// children whose frame there is a client frame other than live are left
// out unloaded: they cannot match it.
func (c *cursor) split(e *engine, live *jsonrpc.Message) []*engine {
	var lh *uint64
	if live != nil && (live.Kind == jsonrpc.KindRequest || live.Kind == jsonrpc.KindNotification) {
		k, members := e.mt.Key(*live, e.rids)
		h := script.ClientHash(k, "", members)
		lh = &h
	}
	kids, err := c.tree.childrenOf(c.ctx, e.node, lh)
	if err != nil || len(kids) == 0 {
		if err != nil {
			c.src.ix.Logger.Warn("reading the replay tree failed; replaying the sessions loaded so far", "err", err)
		}
		e.node = &treeNode{Rep: e.node.Rep, Size: 1, Shared: len(e.frames)}
		return nil
	}
	var out []*engine
	for _, kid := range kids {
		if kid.Rep == e.node.Rep {
			e.node = kid
			continue
		}
		if len(out) == maxSplit {
			c.src.ix.Logger.Warn("candidate sessions part ways on what the server says next; replaying only the first of them", "kept", maxSplit)
			continue
		}
		ne, err := c.bring(kid.Rep, true)
		if errors.Is(err, errApart) {
			continue
		}
		if err != nil {
			c.src.ix.Logger.Warn("loading a candidate session failed; it is left out", "session", kid.Rep, "err", err)
			continue
		}
		ne.node = kid
		if !c.queued {
			c.fresh = append(c.fresh, ne.queue...)
			ne.queue = nil
			if n := len(ne.history); n > 0 && ne.history[n-1] != nil {
				c.freshMatched[ne] = ne.history[n-1]
			}
		}
		out = append(out, ne)
	}
	return out
}

// reach is how far e's members must agree for e to speak for them: past
// every frame e has received or sent, and the one live may match next.
func (c *cursor) reach(e *engine, live *jsonrpc.Message) int {
	r := e.touched
	if live != nil {
		// The next frame live may match: past those done, and past the
		// requests the server refused for their shape, which the door
		// answers and a client need not send at all (see caughtUp).
		next := e.lo
		for next < len(e.frames) && (e.done.has(next) || script.RefusedStream(e.rec.Recording, e.frames[next].F)) {
			next++
		}
		r = max(r, next+1)
	}
	return r
}

// blocked reports whether e has sent and received every frame its members
// share and waits there for a client frame while another member's server
// sends a frame next (the recorded client of e cancelled a request where
// another's server went on, say): that member must be a candidate now,
// or its frames would wait for the client frame of e.
func (c *cursor) blocked(e *engine, live *jsonrpc.Message) bool {
	if live != nil || e.lo < e.node.Shared {
		return false
	}
	kids, err := c.tree.childrenOf(c.ctx, e.node, nil)
	if err != nil {
		return false
	}
	for _, kid := range kids {
		if kid.Rep != e.node.Rep && kid.Hash != 0 && kid.Hash&replayindex.ClientBit == 0 {
			return true
		}
	}
	return false
}

// bring loads session id and brings an engine of it to where the cursor
// is: it receives the client's frames so far (noting in e.history the
// frame each matched), and what they released is queued: beyond the
// frames already emitted when the cursor queues (stdio), all of it when
// it does not (HTTP, whose streams read what was released by frame).
//
// With strict set, it returns errApart when session id does not match
// every client frame so far: it cannot be a candidate.
func (c *cursor) bring(id int64, strict bool) (*engine, error) {
	rec, err := c.src.load(c.ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load session %d: %w", id, err)
	}
	e := newEngine(rec, c.cands[0].mt)
	e.order.ordered = c.queued
	var outs []outFrame
	outs = append(outs, e.release()...)
	e.history = make([]*store.Frame, len(c.history))
	for n, live := range c.history {
		i, ok := e.match(live, false, c.accepts[n])
		if !ok && live.Kind.IsResponse() {
			i, ok = e.match(live, true, c.accepts[n])
		}
		if !ok {
			if strict {
				// As a candidate of the cursor it would have been dropped
				// here (a request its server refused for another shape
				// than the live one's, say).
				return nil, errApart
			}
			continue
		}
		e.consume(i, live)
		e.history[n] = e.frames[i].F
		outs = append(outs, e.release()...)
	}
	if c.queued {
		outs = c.emitted.unsent(outs)
	}
	e.queue = outs
	return e, nil
}

// errApart: a session that cannot be a candidate (see bring).
var errApart = errors.New("the session does not match the client's frames so far")

// splitLazy splits every node whose members part ways where its engine
// has got to: before matching live (frames from e.lo on may differ) and
// after (it released or consumed frames past what all share).
func (c *cursor) splitLazy(live *jsonrpc.Message) {
	if c.src == nil {
		return
	}
	for i := 0; i < len(c.cands); i++ {
		e := c.cands[i]
		if e.node == nil || e.node.Size < 2 {
			continue
		}
		if c.reach(e, live) <= e.node.Shared && !c.blocked(e, live) {
			continue
		}
		c.cands = append(c.cands, c.split(e, live)...)
		i-- // e may need splitting again at its new node
	}
	slices.SortStableFunc(c.cands, func(a, b *engine) int {
		return int(a.rec.Session.ID - b.rec.Session.ID)
	})
}

// closestLazy returns the mismatch report for live across every session
// the candidates stood for before it (nodes): the closest recorded frame
// of any of them, as closestAmong gives it over loaded candidates. The
// sessions of one leaf of the tree are alike to their end, so one of each
// leaf is scored, loaded and brought to where the cursor is (one at a
// time: a mismatch costs time, not memory), in recorded order.
func (c *cursor) closestLazy(live jsonrpc.Message, nodes []*treeNode) *Mismatch {
	loaded := map[int64]*engine{}
	for _, e := range c.cands {
		loaded[e.rec.Session.ID] = e
	}
	var roots []treeNode
	for _, n := range nodes {
		roots = append(roots, *n)
	}
	leaves, err := replayindex.Leaves(c.ctx, c.tree, roots)
	if err != nil {
		c.src.ix.Logger.Warn("reading the replay tree failed; the closest recorded frame is looked for among the sessions loaded", "err", err)
	}
	var best *engine
	bi, bs := -1, match.Score{}
	for _, id := range leaves {
		e := loaded[id]
		if e == nil {
			var err error
			if e, err = c.bring(id, false); err != nil {
				c.src.ix.Logger.Warn("loading a candidate session failed; it is left out of the closest recorded frame", "session", id, "err", err)
				continue
			}
		}
		if i, sc := e.closestIndex(live); i >= 0 && (best == nil || sc.Better(bs)) {
			best, bi, bs = e, i, sc
		}
	}
	if best == nil {
		return closestAmong(c.cands, live)
	}
	return best.mismatchAt(live, bi)
}

// undivided reports whether candidate e speaks for sessions of the tree
// that part ways later.
func (c *cursor) undivided(e *engine) bool {
	c.mu.Lock()
	n := e.node
	c.mu.Unlock()
	if n == nil || n.Size < 2 || c.tree == nil {
		return false
	}
	kids, err := c.tree.childrenOf(c.ctx, n, nil)
	return err == nil && len(kids) > 0
}
