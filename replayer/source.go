package replayer

import (
	"context"
	"log/slog"
	"sync"

	"github.com/mcpvcr/mcpvcr/internal/replayindex"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

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
// in the cassette (see package replayindex, which keeps both), so that
// the next replay reads only what it needs: start and memory follow the
// candidates in play, not the cassette. A Source is safe for concurrent
// use.
type Source struct {
	ix *replayindex.Source

	mu    sync.Mutex       // guards trees
	trees map[string]*tree // by index mode
}

// tree is the candidate tree of a Source's sessions under one set of
// matching rules, as replay reads it.
type tree struct {
	replayindex.Tree
	src    *Source
	stored bool // read from the cassette rather than built now

	mu      sync.Mutex // guards rootRec
	rootRec *recording // the root's first session, once loaded
}

// treeNode is a node of the candidate tree.
type treeNode = replayindex.Node

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
	src := &Source{ix: &replayindex.Source{DB: db, IDs: ids, Logger: logger}, trees: map[string]*tree{}}
	if _, err := src.tree(ctx, mt); err != nil {
		return nil, err
	}
	return src, nil
}

// tree returns the candidate tree of s's sessions under rules mt: held
// already, stored in the cassette, or built now.
func (s *Source) tree(ctx context.Context, mt Match) (*tree, error) {
	mode := script.Mode(mt)
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.trees[mode]; ok {
		return t, nil
	}
	ix, stored, err := s.ix.Tree(ctx, mode, func(rec *store.Recording) []uint64 { return script.Build(rec, mt).Hashes() })
	if err != nil {
		return nil, err
	}
	s.trees[mode] = &tree{Tree: ix, src: s, stored: stored}
	return s.trees[mode], nil
}

// childrenOf returns n's children; with live set, only those that can
// match it (its hash, refused or not; see replayindex.Tree) and the one
// holding n's first session.
func (t *tree) childrenOf(ctx context.Context, n *treeNode, live *uint64) ([]*treeNode, error) {
	kids, err := t.Children(ctx, *n, live)
	if err != nil {
		return nil, err
	}
	out := make([]*treeNode, len(kids))
	for i := range kids {
		out[i] = &kids[i]
	}
	return out, nil
}

// Len returns the number of sessions in the source.
func (s *Source) Len() int { return len(s.ix.IDs) }

// load reads one session.
func (s *Source) load(ctx context.Context, id int64) (*recording, error) {
	rec, err := s.ix.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	return &recording{Recording: rec}, nil
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
		rec, err := t.src.load(ctx, t.Root().Rep)
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
	root := t.Root()
	e.node = &root
	return t, []*engine{e}, nil
}
