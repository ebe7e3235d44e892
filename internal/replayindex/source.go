package replayindex

import (
	"context"
	"iter"
	"log/slog"
	"sync"
	"sync/atomic"

	"github.com/mcpvcr/mcpvcr/store"
)

// Source is a set of a cassette's sessions read for replay on demand:
// one session at a time (Load), and the candidate tree and exchange rows
// of the set, read from the cassette's cache or built now, by the
// caller's hashing and rows, and stored when the cassette can be written
// and every session has ended. A Source is safe for concurrent use; the
// caller keeps DB open while it is in use.
type Source struct {
	DB     *store.DB
	IDs    []int64
	Logger *slog.Logger // hears about an index that could not be stored

	loads atomic.Int64

	mu    sync.Mutex      // guards trees
	trees map[string]Tree // by mode
}

// Loads returns how many sessions s has read.
func (s *Source) Loads() int64 { return s.loads.Load() }

// Load reads session id.
func (s *Source) Load(ctx context.Context, id int64) (*store.Recording, error) {
	s.loads.Add(1)
	recs, err := s.DB.Recordings(ctx, id)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// Tree returns the candidate tree of s's sessions under mode, whose
// hashes hash computes for a session: the one returned before, the one
// stored in the cassette, or one built now from the hashes the cassette
// holds and those hash computes for the sessions it lacks. stored says
// the tree was read from the cassette.
func (s *Source) Tree(ctx context.Context, mode string, hash func(*store.Recording) []uint64) (t Tree, stored bool, err error) {
	s.mu.Lock()
	defer s.mu.Unlock() // one build at a time
	if t, ok := s.trees[mode]; ok {
		return t, false, nil
	}
	if s.trees == nil {
		s.trees = map[string]Tree{}
	}
	name := Name(mode, s.IDs)
	if t, ok, err := OpenTree(ctx, s.DB, name); err != nil || ok {
		if ok {
			s.trees[mode] = t
		}
		return t, ok, err
	}
	entries, complete, err := s.hashes(ctx, mode, hash)
	if err != nil {
		return nil, false, err
	}
	nodes := Build(entries)
	if complete {
		if err := PutTree(ctx, s.DB, name, nodes); err != nil {
			s.logger().Info("the replay tree could not be stored in the cassette; it will be built again next time", "err", err)
		}
	}
	s.trees[mode] = MemTree(nodes)
	return s.trees[mode], false, nil
}

// hashes returns the entries of s's sessions in mode, computing and
// storing those the cassette lacks, and whether every session has ended.
func (s *Source) hashes(ctx context.Context, mode string, hash func(*store.Recording) []uint64) ([]Entry, bool, error) {
	stored, err := Hashes(ctx, s.DB, mode)
	if err != nil {
		return nil, false, err
	}
	complete := true
	built := map[int64][]uint64{}
	var entries []Entry
	for _, id := range s.IDs {
		hs, ok := stored[id]
		if !ok {
			rec, err := s.Load(ctx, id)
			if err != nil {
				return nil, false, err
			}
			hs = hash(rec)
			if rec.Session.EndedAt.IsZero() {
				complete = false
			} else {
				built[id] = hs
			}
		}
		entries = append(entries, Entry{ID: id, Hashes: hs})
	}
	if err := PutHashes(ctx, s.DB, mode, built); err != nil {
		s.logger().Info("the replay index could not be stored in the cassette; it will be built again next time", "err", err)
	}
	return entries, complete, nil
}

// Exchanges returns the exchange rows of s's sessions named name in
// cache table table: stored in the cassette, or built now by build from
// s's sessions, read one at a time, and stored when every session has
// ended. stored says they were read from the cassette.
func (s *Source) Exchanges(ctx context.Context, table, name string, build func(iter.Seq2[*store.Recording, error]) ([]Row, error)) (x Exchanges, stored bool, err error) {
	if x, ok, err := OpenExchanges(ctx, s.DB, table, name); err != nil || ok {
		return x, ok, err
	}
	complete := true
	rows, err := build(func(yield func(*store.Recording, error) bool) {
		for _, id := range s.IDs {
			rec, err := s.Load(ctx, id)
			if err == nil {
				complete = complete && !rec.Session.EndedAt.IsZero()
			}
			if !yield(rec, err) || err != nil {
				return
			}
		}
	})
	if err != nil {
		return nil, false, err
	}
	if complete {
		if err := PutExchanges(ctx, s.DB, table, name, rows); err != nil {
			s.logger().Info("the replay exchange index could not be stored in the cassette; it will be built again next time", "err", err)
		}
	}
	return MemExchanges(rows), false, nil
}

func (s *Source) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}
