package replayer

// What a cursor reading a Source asks of the sessions it has not loaded:
// the closest recorded frame among them, and whether they part later.

import (
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
)

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
	var leaves []int64
	seen := map[int64]bool{}
	var walk func(n *treeNode)
	walk = func(n *treeNode) {
		if n.size > 1 {
			kids, err := c.tree.childrenOf(c.ctx, n, nil, n.rep)
			if err != nil {
				c.src.logger.Warn("reading the replay tree failed; the closest recorded frame is looked for among the sessions loaded", "err", err)
			}
			if len(kids) > 0 {
				for _, k := range kids {
					walk(k)
				}
				return
			}
		}
		if !seen[n.rep] {
			seen[n.rep] = true
			leaves = append(leaves, n.rep)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	slices.Sort(leaves)
	var best *engine
	bi, bs := -1, closestScore{}
	for _, id := range leaves {
		e := loaded[id]
		if e == nil {
			var err error
			if e, err = c.bring(id); err != nil {
				c.src.logger.Warn("loading a candidate session failed; it is left out of the closest recorded frame", "session", id, "err", err)
				continue
			}
		}
		if i, sc := e.closestIndex(live); i >= 0 && (best == nil || sc.better(bs)) {
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
	if n == nil || n.size < 2 || c.tree == nil {
		return false
	}
	kids, err := c.tree.childrenOf(c.ctx, n, nil, n.rep)
	return err == nil && len(kids) > 0
}
