package replayer

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync/atomic"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/store"
)

// indexMode names how the replay index hashes frames; an index stored in
// another mode is rebuilt.
const indexMode = "v1 tolerant"

// maxSplit bounds how many sessions replay loads at once when candidates
// that agreed so far part ways on what the server says next (their
// client frames being the same, no client frame can tell them apart):
// the first maxSplit, in recorded order, stay candidates.
const maxSplit = 64

// Source is a cassette's sessions, read for replay on demand: a client is
// matched against an index of every session (a hash per frame), and a
// session is loaded only when it must speak for the sessions that agree
// with it so far. Memory then follows the candidates in play, not the
// cassette. It is safe for concurrent use by the Servers it serves.
type Source struct {
	db      *store.DB
	entries []*indexEntry // by session id
	logger  *slog.Logger
	loads   atomic.Int64 // sessions loaded for replay so far
}

// indexEntry is one session in the replay index.
type indexEntry struct {
	id int64
	// hashes has one hash per protocol frame, in recorded order; the top
	// bit marks a client frame.
	hashes []uint64
}

const clientBit = 1 << 63

// NewSource prepares sessions ids of db for replay (every session when
// ids is empty). It reads the replay index stored in the cassette and
// builds the entries it lacks, one session at a time, storing those of
// ended sessions when the cassette can be written. The caller keeps db
// open while the Source is in use. logger, if not nil, hears about an
// index that could not be stored.
func NewSource(ctx context.Context, db *store.DB, logger *slog.Logger, ids ...int64) (*Source, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	src := &Source{db: db, logger: logger}
	if len(ids) == 0 {
		ss, err := db.Sessions(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range ss {
			ids = append(ids, s.ID)
		}
	}
	stored, err := db.ReplayIndex(ctx, indexMode)
	if err != nil {
		return nil, err
	}
	built := map[int64][]byte{}
	for _, id := range ids {
		b, ok := stored[id]
		if !ok {
			recs, err := Load(ctx, db, id)
			if err != nil {
				return nil, err
			}
			b = indexOf(recs[0])
			if !recs[0].Session.EndedAt.IsZero() {
				built[id] = b
			}
		}
		src.entries = append(src.entries, &indexEntry{id: id, hashes: decodeHashes(b)})
	}
	if err := db.PutReplayIndex(ctx, indexMode, built); err != nil {
		logger.Info("the replay index could not be stored in the cassette; it will be built again next time", "err", err)
	}
	return src, nil
}

// Len returns the number of sessions in the source.
func (s *Source) Len() int { return len(s.entries) }

// load reads one session.
func (s *Source) load(ctx context.Context, id int64) (*Recording, error) {
	s.loads.Add(1)
	recs, err := Load(ctx, s.db, id)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// all loads every session of s.
func (s *Source) all(ctx context.Context) ([]*Recording, error) {
	ids := make([]int64, len(s.entries))
	for i, e := range s.entries {
		ids[i] = e.id
	}
	if len(ids) == 0 {
		return nil, ErrNoRecordings
	}
	return Load(ctx, s.db, ids...)
}

// indexOf hashes rec's protocol frames as tolerant replay matches them.
func indexOf(rec *Recording) []byte {
	t := buildTemplate(rec, Match{})
	b := make([]byte, 0, 8*len(t.frames))
	for i := range t.frames {
		b = binary.LittleEndian.AppendUint64(b, frameHash(&t.frames[i]))
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
	return h.Sum64() | clientBit
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

// candidates returns the first engines of a lazy cursor: one for the
// sessions that share their opening, or one per opening where they part.
func (s *Source) candidates(ctx context.Context, mt Match) ([]*engine, error) {
	if len(s.entries) == 0 {
		return nil, ErrNoRecordings
	}
	rec, err := s.load(ctx, s.entries[0].id)
	if err != nil {
		return nil, err
	}
	e := newEngine(rec, mt)
	e.members = s.entries
	e.shared = shared(s.entries)
	return []*engine{e}, nil
}

// split parts e's class where its members part ways (at e.shared): e
// keeps the members that agree with it there, and each other group gets
// an engine of its own, loaded and brought to e's state by replaying the
// client's frames so far (history) and dropping the first emitted
// released frames, which went out already. When live is not nil, groups
// whose frame there is a client frame other than live are dropped
// unloaded: they cannot match it.
func (c *cursor) split(e *engine, live *jsonrpc.Message) []*engine {
	p := e.shared
	var order []uint64
	groups := map[uint64][]*indexEntry{}
	const end = 0 // a client hash always has the top bit; 0 stands for "no frame"
	for _, m := range e.members {
		h, ok := m.hashAt(p)
		if !ok {
			h = end
		}
		if _, seen := groups[h]; !seen {
			order = append(order, h)
		}
		groups[h] = append(groups[h], m)
	}
	own, _ := e.members[0].hashAt(p)
	if len(e.members[0].hashes) <= p {
		own = end
	}
	e.members = groups[own]
	e.shared = shared(e.members)
	var liveHash uint64
	filter := live != nil && (live.Kind == jsonrpc.KindRequest || live.Kind == jsonrpc.KindNotification)
	if filter {
		k, members := e.matchKey(*live, e.rids)
		liveHash = clientHash(k, "", members)
	}
	var out []*engine
	for _, h := range order {
		if h == own {
			continue
		}
		if filter && h&clientBit != 0 && h != liveHash {
			continue
		}
		if len(out) == maxSplit {
			c.src.logger.Warn("candidate sessions part ways on what the server says next; replaying only the first of them", "kept", maxSplit)
			break
		}
		g := groups[h]
		ne, err := c.bring(g[0].id)
		if err != nil {
			c.src.logger.Warn("loading a candidate session failed; it is left out", "session", g[0].id, "err", err)
			continue
		}
		ne.members = g
		ne.shared = shared(g)
		out = append(out, ne)
	}
	return out
}

// bring loads session id and brings an engine of it to where the cursor
// is: it receives the client's frames so far, and what they released
// beyond the frames already emitted is queued.
func (c *cursor) bring(id int64) (*engine, error) {
	rec, err := c.src.load(c.ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load session %d: %w", id, err)
	}
	e := newEngine(rec, c.cands[0].mt)
	var outs []Out
	outs = append(outs, e.release()...)
	for _, live := range c.history {
		i, ok := e.match(live, false, nil)
		if !ok {
			i, ok = e.match(live, true, nil)
		}
		if !ok {
			continue
		}
		e.consume(i, live)
		outs = append(outs, e.release()...)
	}
	e.queue = outs[min(c.emitted, len(outs)):]
	return e, nil
}

// splitLazy splits every class whose members part ways where its engine
// has got to: before matching live (frames from e.lo on may differ) and
// after (it released or consumed frames past what all share).
func (c *cursor) splitLazy(live *jsonrpc.Message) {
	if c.src == nil {
		return
	}
	for i := 0; i < len(c.cands); i++ {
		e := c.cands[i]
		if len(e.members) < 2 {
			continue
		}
		reach := e.touched
		if live != nil {
			reach = max(reach, e.lo+1)
		}
		if reach <= e.shared {
			continue
		}
		c.cands = append(c.cands, c.split(e, live)...)
		i-- // e may need splitting again at its new boundary
	}
	slices.SortStableFunc(c.cands, func(a, b *engine) int {
		return int(a.rec.Session.ID - b.rec.Session.ID)
	})
}
