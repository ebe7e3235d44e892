package replayer

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/mcpvcr/mcpvcr/store"
)

// indexMode names how the replay index hashes frames under the tolerant
// default; an index stored in another mode is rebuilt. Other matching
// rules have a mode of their own (see modeOf).
const indexMode = "v5 tolerant" // v2: secret JSON members masked; v3: refusals marked; v4: answers keyed with their server request's method and rules; v5: long keys by digest (valueKey)

// modeOf names the index mode of matching rules mt: the index hashes each
// client frame by its match key under mt, so that the sessions a node of
// the tree holds agree under mt, whatever rules it has.
func modeOf(mt Match) string {
	return "v5 " + mt.String()
}

// maxSplit bounds how many sessions replay loads at once when candidates
// that agreed so far part ways on what the server says next (their
// client frames being the same, no client frame can tell them apart):
// the first maxSplit, in recorded order, stay candidates.
const maxSplit = 64

// Source is a cassette's sessions, read for replay on demand. Replay
// follows a tree of the sessions: the root stands for all of them and
// says how many leading frames they share; where they part, each child
// stands for the sessions that agree on the frame there. A client starts
// with one loaded session speaking for the root, and a node's children
// are read, and their sessions loaded, only when the client gets to where
// they part (and only those that can still match what it sent). The tree
// is built from the replay index (one hash per frame and session, under
// the matching rules in use: each set of rules has its tree) and stored
// in the cassette, so that the next replay reads only what it needs:
// start and memory follow the candidates in play, not the cassette. A
// Source is safe for concurrent use.
type Source struct {
	db     *store.DB
	logger *slog.Logger
	ids    []int64
	loads  atomic.Int64

	mu    sync.Mutex       // guards trees
	trees map[string]*tree // by index mode
}

// tree is the candidate tree of a Source's sessions under one set of
// matching rules.
type tree struct {
	src  *Source
	name string // the stored tree's name; "" when it is held in memory only
	root *treeNode

	mu       sync.Mutex            // guards children and rootRec
	children map[int64][]*treeNode // read or built so far, by parent
	rootRec  *recording            // the root's first session, once loaded
}

// treeNode is a node of the candidate tree.
type treeNode struct {
	id     int64
	hash   uint64 // the members' frame where they part from their siblings
	shared int    // frames all members share
	rep    int64  // the first member
	size   int
}

// indexEntry is one session in the replay index.
type indexEntry struct {
	id int64
	// hashes has one hash per protocol frame, in recorded order; the top
	// bit marks a client frame.
	hashes []uint64
}

const clientBit = 1 << 63

// refusedBit marks the hash of a client frame the server refused at the
// HTTP level: it matches only a request of its very shape (see
// liveSession.post), so sessions that refused a request where others
// took it part there (a client whose initialize was refused for a
// foreign Host and then sent again, say).
const refusedBit = 1 << 62

// NewSource prepares sessions ids of db for replay (every session when
// ids is empty). It reads the candidate tree of the tolerant default
// stored for exactly those sessions, or builds it: from the replay index,
// building the entries the index lacks one session at a time, and stores
// both when the cassette can be written and every session has ended. A
// replay with other matching rules reads or builds the tree of those
// rules likewise when it starts. The caller keeps db open while the
// Source is in use. logger, if not nil, hears about an index that could
// not be stored.
func NewSource(ctx context.Context, db *store.DB, logger *slog.Logger, ids ...int64) (*Source, error) {
	return newSource(ctx, db, logger, Match{}, ids...)
}

// Index builds and stores the replay index and candidate tree of sessions
// ids of db (every session when ids is empty), as NewSource does, so that
// the first replay of a cassette just written (imported, scrubbed) starts
// as fast as any; a replay builds what is missing itself. It is an error
// only when the sessions cannot be read; logger, if not nil, hears about
// an index that could not be stored.
func Index(ctx context.Context, db *store.DB, logger *slog.Logger, ids ...int64) error {
	_, err := newSource(ctx, db, logger, Match{}, ids...)
	return err
}

// newSource is NewSource with the tree of rules mt built or read first.
func newSource(ctx context.Context, db *store.DB, logger *slog.Logger, mt Match, ids ...int64) (*Source, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if len(ids) == 0 {
		var err error
		if ids, err = db.SessionIDs(ctx); err != nil {
			return nil, err
		}
	}
	if len(ids) == 0 {
		return nil, ErrNoRecordings
	}
	src := &Source{db: db, logger: logger, ids: ids, trees: map[string]*tree{}}
	if _, err := src.tree(ctx, mt); err != nil {
		return nil, err
	}
	return src, nil
}

// tree returns the candidate tree of s's sessions under rules mt: held
// already, stored in the cassette, or built now.
func (s *Source) tree(ctx context.Context, mt Match) (*tree, error) {
	mode := modeOf(mt)
	s.mu.Lock()
	defer s.mu.Unlock() // one build at a time
	if t, ok := s.trees[mode]; ok {
		return t, nil
	}
	t := &tree{src: s, children: map[int64][]*treeNode{}}
	name := treeName(mode, s.ids)
	if root, ok, err := s.db.ReplayRoot(ctx, name); err != nil {
		return nil, err
	} else if ok {
		t.name, t.root = name, fromStore(root)
		s.trees[mode] = t
		return t, nil
	}
	entries, complete, err := s.index(ctx, mode, mt)
	if err != nil {
		return nil, err
	}
	nodes := buildTree(entries)
	for _, n := range nodes[1:] {
		t.children[n.Parent] = append(t.children[n.Parent], fromStore(n))
	}
	t.root = fromStore(nodes[0])
	if complete {
		if err := s.db.PutReplayTree(ctx, name, nodes); err != nil {
			s.logger.Info("the replay tree could not be stored in the cassette; it will be built again next time", "err", err)
		}
	}
	s.trees[mode] = t
	return t, nil
}

// treeName names the tree of a set of sessions in an index mode.
func treeName(mode string, ids []int64) string {
	h := fnv.New64a()
	for _, id := range ids {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(id)))
	}
	return fmt.Sprintf("%s %d %016x", mode, len(ids), h.Sum64())
}

func fromStore(n store.ReplayNode) *treeNode {
	return &treeNode{id: n.ID, hash: uint64(n.Hash), shared: n.Shared, rep: n.Rep, size: n.Size}
}

// index returns the replay index entries of s's sessions in mode (the
// hashes of rules mt), building and storing those the cassette lacks, and
// whether every session has ended.
func (s *Source) index(ctx context.Context, mode string, mt Match) ([]*indexEntry, bool, error) {
	stored, err := s.db.ReplayIndex(ctx, mode)
	if err != nil {
		return nil, false, err
	}
	complete := true
	built := map[int64][]byte{}
	var entries []*indexEntry
	for _, id := range s.ids {
		b, ok := stored[id]
		if !ok {
			recs, err := load(ctx, s.db, id)
			if err != nil {
				return nil, false, err
			}
			b = indexOf(recs[0], mt)
			if recs[0].Session.EndedAt.IsZero() {
				complete = false
			} else {
				built[id] = b
			}
		}
		entries = append(entries, &indexEntry{id: id, hashes: decodeHashes(b)})
	}
	if err := s.db.PutReplayIndex(ctx, mode, built); err != nil {
		s.logger.Info("the replay index could not be stored in the cassette; it will be built again next time", "err", err)
	}
	return entries, complete, nil
}

// buildTree returns the candidate tree of entries, root first: each
// node's children group its members by their frame where they part.
func buildTree(entries []*indexEntry) []store.ReplayNode {
	var nodes []store.ReplayNode
	var build func(members []*indexEntry, parent int64, hash uint64)
	build = func(members []*indexEntry, parent int64, hash uint64) {
		n := store.ReplayNode{ID: int64(len(nodes) + 1), Parent: parent, Hash: int64(hash), Shared: shared(members), Rep: members[0].id, Size: len(members)}
		nodes = append(nodes, n)
		longest := 0
		for _, m := range members {
			longest = max(longest, len(m.hashes))
		}
		if len(members) == 1 || n.Shared >= longest {
			return // one session, or sessions alike to the end
		}
		var order []uint64
		groups := map[uint64][]*indexEntry{}
		for _, m := range members {
			h, _ := m.hashAt(n.Shared) // 0 where m has ended
			if _, seen := groups[h]; !seen {
				order = append(order, h)
			}
			groups[h] = append(groups[h], m)
		}
		for _, h := range order {
			build(groups[h], n.ID, h)
		}
	}
	build(entries, 0, 0)
	return nodes
}

// childrenOf returns n's children; with live set, only those that can
// match it (see store.DB.ReplayChildren: its hash, refused or not) and
// the one holding rep.
func (t *tree) childrenOf(ctx context.Context, n *treeNode, live *uint64, rep int64) ([]*treeNode, error) {
	t.mu.Lock()
	kids, ok := t.children[n.id]
	t.mu.Unlock()
	if !ok && t.name != "" {
		var hs []int64
		if live != nil {
			hs = []int64{int64(*live), int64(*live | refusedBit)}
		}
		ns, err := t.src.db.ReplayChildren(ctx, t.name, n.id, hs, rep)
		if err != nil {
			return nil, err
		}
		for _, c := range ns {
			kids = append(kids, fromStore(c))
		}
		if live == nil {
			t.mu.Lock()
			t.children[n.id] = kids
			t.mu.Unlock()
		}
	}
	if live == nil {
		return kids, nil
	}
	return slices.DeleteFunc(slices.Clone(kids), func(c *treeNode) bool {
		return c.rep != rep && c.hash&clientBit != 0 && c.hash&^refusedBit != *live
	}), nil
}

// Len returns the number of sessions in the source.
func (s *Source) Len() int { return len(s.ids) }

// load reads one session.
func (s *Source) load(ctx context.Context, id int64) (*recording, error) {
	s.loads.Add(1)
	recs, err := load(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// indexOf hashes rec's protocol frames as replay matches them under mt.
func indexOf(rec *recording, mt Match) []byte {
	t := buildTemplate(rec, mt)
	b := make([]byte, 0, 8*len(t.frames))
	for i := range t.frames {
		h := frameHash(&t.frames[i])
		if refusedFrame(rec, t.frames[i].f) {
			h |= refusedBit
		}
		b = binary.LittleEndian.AppendUint64(b, h)
	}
	return b
}

func decodeHashes(b []byte) []uint64 {
	hs := make([]uint64, len(b)/8)
	for i := range hs {
		hs[i] = binary.LittleEndian.Uint64(b[8*i:])
	}
	return hs
}

// frameHash is the index hash of a recorded frame.
func frameHash(fr *recFrame) uint64 {
	if fr.c2s {
		return clientHash(fr.key, fr.body, fr.memberKeys)
	}
	h := fnv.New64a()
	h.Write(fr.f.Data)
	return h.Sum64() &^ clientBit
}

func clientHash(key, body string, members []string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(key))
	h.Write([]byte{0})
	h.Write([]byte(body))
	for _, m := range members {
		h.Write([]byte{0})
		h.Write([]byte(m))
	}
	return h.Sum64()&^refusedBit | clientBit
}

// shared returns how many leading hashes all entries have in common.
func shared(es []*indexEntry) int {
	n := 0
	for {
		if n >= len(es[0].hashes) {
			return n
		}
		h := es[0].hashes[n]
		for _, e := range es[1:] {
			if n >= len(e.hashes) || e.hashes[n] != h {
				return n
			}
		}
		n++
	}
}

// hashAt returns entry e's hash at n, and false past its end.
func (e *indexEntry) hashAt(n int) (uint64, bool) {
	if n >= len(e.hashes) {
		return 0, false
	}
	return e.hashes[n], true
}

// first returns the first session of the root of the tree of rules mt,
// loaded once and shared by every client (recordings are read-only).
func (s *Source) first(ctx context.Context, mt Match) (*recording, error) {
	t, err := s.tree(ctx, mt)
	if err != nil {
		return nil, err
	}
	return t.first(ctx)
}

func (t *tree) first(ctx context.Context) (*recording, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rootRec == nil {
		rec, err := t.src.load(ctx, t.root.rep)
		if err != nil {
			return nil, err
		}
		t.rootRec = rec
	}
	return t.rootRec, nil
}

// candidates returns the tree of rules mt and the first engine of a lazy
// cursor: the root's first session, speaking for every session.
func (s *Source) candidates(ctx context.Context, mt Match) (*tree, []*engine, error) {
	t, err := s.tree(ctx, mt)
	if err != nil {
		return nil, nil, err
	}
	rec, err := t.first(ctx)
	if err != nil {
		return nil, nil, err
	}
	e := newEngine(rec, mt)
	e.node = t.root
	return t, []*engine{e}, nil
}
