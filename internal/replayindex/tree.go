package replayindex

import (
	"cmp"
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"

	"github.com/mcpvcr/mcpvcr/store"
)

// Node is a node of the candidate tree.
type Node struct {
	ID, Parent int64 // Parent is 0 for the root
	// Hash is the hash of the members' frame where they part from their
	// siblings (0 where they have ended); Shared how many leading frames
	// all members share.
	Hash   uint64
	Shared int
	// Rep is the node's first session; Size how many sessions it holds.
	Rep  int64
	Size int
	// repHash is the Hash of the child holding Rep, if any.
	repHash uint64
}

// Entry is one session's hashes, one per protocol frame in recorded
// order.
type Entry struct {
	ID     int64
	Hashes []uint64
}

// Tree is a candidate tree, stored or held in memory. It is safe for
// concurrent use.
type Tree interface {
	// Root returns the root, which stands for every session.
	Root() Node
	// Children returns parent's children in order. When live is not nil,
	// only those that can match a client frame of hash live are returned
	// (the children at a server frame or at the end, and those at a
	// client frame of hash live, refused or not), and the one holding
	// parent.Rep.
	Children(ctx context.Context, parent Node, live *uint64) ([]Node, error)
}

// Leaves returns, in recorded order, the first session of each leaf of t
// under nodes: one session for each way the sessions under nodes end.
// A node whose children cannot be read counts as a leaf; the first such
// error is returned with the leaves found.
func Leaves(ctx context.Context, t Tree, nodes []Node) ([]int64, error) {
	var leaves []int64
	var first error
	seen := map[int64]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		if n.Size > 1 {
			kids, err := t.Children(ctx, n, nil)
			if err != nil && first == nil {
				first = err
			}
			if len(kids) > 0 {
				for _, k := range kids {
					walk(k)
				}
				return
			}
		}
		if !seen[n.Rep] {
			seen[n.Rep] = true
			leaves = append(leaves, n.Rep)
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	slices.Sort(leaves)
	return leaves, first
}

// Name names the tree of sessions ids under a hashing mode.
func Name(mode string, ids []int64) string {
	h := fnv.New64a()
	for _, id := range ids {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(id)))
	}
	return fmt.Sprintf("%s %d %016x", mode, len(ids), h.Sum64())
}

// Build returns the candidate tree of entries, root first, each node
// before its children: each node's children group its members by their
// hash where they part, in the order of their first member.
func Build(entries []Entry) []Node {
	var nodes []Node
	var build func(members []Entry, parent int64, hash uint64) int
	build = func(members []Entry, parent int64, hash uint64) int {
		i := len(nodes)
		n := Node{ID: int64(i + 1), Parent: parent, Hash: hash, Shared: shared(members), Rep: members[0].ID, Size: len(members)}
		nodes = append(nodes, n)
		longest := 0
		for _, m := range members {
			longest = max(longest, len(m.Hashes))
		}
		if len(members) == 1 || n.Shared >= longest {
			return i // one session, or sessions alike to the end
		}
		var order []uint64
		groups := map[uint64][]Entry{}
		for _, m := range members {
			h := uint64(0) // where m has ended
			if n.Shared < len(m.Hashes) {
				h = m.Hashes[n.Shared]
			}
			if _, seen := groups[h]; !seen {
				order = append(order, h)
			}
			groups[h] = append(groups[h], m)
		}
		nodes[i].repHash = order[0]
		for _, h := range order {
			build(groups[h], n.ID, h)
		}
		return i
	}
	build(entries, 0, 0)
	return nodes
}

// shared returns how many leading hashes all entries have in common.
func shared(es []Entry) int {
	for n := 0; ; n++ {
		if n >= len(es[0].Hashes) {
			return n
		}
		for _, e := range es[1:] {
			if n >= len(e.Hashes) || e.Hashes[n] != es[0].Hashes[n] {
				return n
			}
		}
	}
}

// keep reports whether child c of parent is one Children returns for
// live.
func keep(parent, c Node, live uint64) bool {
	return c.Rep == parent.Rep || c.Hash&ClientBit == 0 || c.Hash&^RefusedBit == live
}

// MemTree returns the tree of nodes (as Build returns them) held in
// memory.
func MemTree(nodes []Node) Tree {
	t := memTree{root: nodes[0], children: map[int64][]Node{}}
	for _, n := range nodes[1:] {
		t.children[n.Parent] = append(t.children[n.Parent], n)
	}
	return t
}

type memTree struct {
	root     Node
	children map[int64][]Node // by parent, in order; read-only
}

func (t memTree) Root() Node { return t.root }

func (t memTree) Children(_ context.Context, parent Node, live *uint64) ([]Node, error) {
	kids := t.children[parent.ID]
	if live == nil {
		return kids, nil
	}
	return slices.DeleteFunc(slices.Clone(kids), func(c Node) bool { return !keep(parent, c, *live) }), nil
}

// PutTree stores nodes (as Build returns them) as the tree name in c,
// replacing every tree stored before: a cassette keeps the one it was
// last replayed with.
//
// A node is stored under its parent, the class of its hash (a client
// frame or not) and its hash, so that the children a client frame can
// match are read without the others.
func PutTree(ctx context.Context, c Cache, name string, nodes []Node) error {
	es := make([]store.CacheEntry, 0, len(nodes))
	for _, n := range nodes {
		k := binary.BigEndian.AppendUint64(treeKey(name, n.Parent, n.Hash), uint64(n.ID))
		v := binary.AppendUvarint(nil, uint64(n.Shared))
		v = binary.AppendUvarint(v, uint64(n.Rep))
		v = binary.AppendUvarint(v, uint64(n.Size))
		v = binary.AppendUvarint(v, n.repHash)
		es = append(es, store.CacheEntry{Key: k, Value: v})
	}
	return c.CachePut(ctx, treeTable, true, es)
}

// treeKey returns the key prefix of name's children of parent with hash
// h: the name, the parent, 0 for a hash without ClientBit (1 with it),
// and the hash.
func treeKey(name string, parent int64, h uint64) []byte {
	return binary.BigEndian.AppendUint64(treeClass(name, parent, h&ClientBit != 0), h)
}

func treeClass(name string, parent int64, client bool) []byte {
	k := binary.BigEndian.AppendUint64(appendString(nil, name), uint64(parent))
	if client {
		return append(k, 1)
	}
	return append(k, 0)
}

// OpenTree returns the tree name stored in c, and false when there is
// none.
func OpenTree(ctx context.Context, c Cache, name string) (Tree, bool, error) {
	t := &storedTree{c: c, name: name, children: map[int64][]Node{}}
	ns, err := t.read(ctx, treeClass(name, 0, false), 1)
	if err != nil || len(ns) == 0 {
		return nil, false, err
	}
	t.root = ns[0]
	return t, true, nil
}

type storedTree struct {
	c    Cache
	name string
	root Node

	mu       sync.Mutex       // guards children
	children map[int64][]Node // all children of a parent, read so far
}

func (t *storedTree) Root() Node { return t.root }

func (t *storedTree) Children(ctx context.Context, parent Node, live *uint64) ([]Node, error) {
	t.mu.Lock()
	kids, ok := t.children[parent.ID]
	t.mu.Unlock()
	if ok || live == nil {
		if !ok {
			var err error
			if kids, err = t.read(ctx, binary.BigEndian.AppendUint64(appendString(nil, t.name), uint64(parent.ID)), 0); err != nil {
				return nil, err
			}
			t.mu.Lock()
			t.children[parent.ID] = kids
			t.mu.Unlock()
		}
		if live == nil {
			return kids, nil
		}
		return slices.DeleteFunc(slices.Clone(kids), func(c Node) bool { return !keep(parent, c, *live) }), nil
	}
	// Only the children that can match live: every child at a server
	// frame or the end, those at live (refused or not), and the one
	// holding parent.Rep, each read by its key.
	prefixes := [][]byte{treeClass(t.name, parent.ID, false),
		treeKey(t.name, parent.ID, *live|ClientBit), treeKey(t.name, parent.ID, *live|ClientBit|RefusedBit)}
	if parent.repHash&ClientBit != 0 {
		prefixes = append(prefixes, treeKey(t.name, parent.ID, parent.repHash))
	}
	seen := map[int64]bool{}
	for _, p := range prefixes {
		ns, err := t.read(ctx, p, 0)
		if err != nil {
			return nil, err
		}
		for _, n := range ns {
			if !seen[n.ID] && keep(parent, n, *live) {
				seen[n.ID] = true
				kids = append(kids, n)
			}
		}
	}
	slices.SortFunc(kids, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	return kids, nil
}

// read returns the nodes stored under prefix, at most limit (all when
// limit is 0), in order of their id.
func (t *storedTree) read(ctx context.Context, prefix []byte, limit int) ([]Node, error) {
	es, err := t.c.CacheRange(ctx, treeTable, prefix, 0, limit)
	if err != nil {
		return nil, err
	}
	nameLen := len(appendString(nil, t.name))
	ns := make([]Node, 0, len(es))
	for _, e := range es {
		if len(e.Key) != nameLen+8+1+8+8 {
			return nil, fmt.Errorf("replay tree %s: a key of %d bytes", t.name, len(e.Key))
		}
		k := e.Key[nameLen:]
		n := Node{Parent: int64(binary.BigEndian.Uint64(k)), Hash: binary.BigEndian.Uint64(k[9:]), ID: int64(binary.BigEndian.Uint64(k[17:]))}
		var sh, rep, size uint64
		if _, ok := readUvarints(e.Value, &sh, &rep, &size, &n.repHash); !ok {
			return nil, fmt.Errorf("replay tree %s: node %d is cut short", t.name, n.ID)
		}
		n.Shared, n.Rep, n.Size = int(sh), int64(rep), int(size)
		ns = append(ns, n)
	}
	slices.SortFunc(ns, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	return ns, nil
}
