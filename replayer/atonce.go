package replayer

// The index of what an HTTP replay answers from every session at once
// rather than from one conversation: the 2026-07-28 exchanges (pool.go),
// the requests a server refused for their shape and the shapes of every
// recorded request (door.go). Reading a Source, replay looks a request up
// in it and loads only the sessions the rows it finds name, so that its
// start and its answers do not grow with the cassette. The index is built
// once per set of sessions and matching rules, one session at a time,
// and stored in the cassette (replayindex.PutExchanges) when it can be
// written and every session has ended; else it is held in memory for the
// run, as it is for Recordings given as they are.

import (
	"context"
	"fmt"
	"iter"
	"log/slog"
	"sync"

	"github.com/mcpvcr/mcpvcr/internal/replayindex"
	"github.com/mcpvcr/mcpvcr/internal/reqshape"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// atOnce is the index of what HTTP replay answers from every session at
// once, under one set of matching rules. It is safe for concurrent use.
type atOnce struct {
	src    *Source // nil when recs holds every session
	log    *slog.Logger
	ix     replayindex.Exchanges // the cassette's, or held in memory when it could not be stored
	stored bool                  // ix was read from the cassette rather than built now
	// shapes are the distinct door shapes recorded (refused and answered
	// apart), each with the first request of its shape, in recorded
	// order; their rec and st are read when needed (resolve).
	shapes   []doorShape
	pool     bool // the index holds 2026-07-28 exchanges
	discover bool // a recorded client sent server/discover

	mu   sync.Mutex           // guards recs
	recs map[int64]*recording // sessions loaded for rows, shared by every request
}

// atOnce returns s's index under rules mt: stored in the cassette, or
// built now (and stored when it can be).
func (s *Source) atOnce(ctx context.Context, mt Match) (*atOnce, error) {
	name := script.ExchangesVersion + " " + replayindex.Name(script.Mode(mt), s.ix.IDs)
	a := &atOnce{src: s, log: s.ix.Logger, recs: map[int64]*recording{}}
	var err error
	a.ix, a.stored, err = s.ix.Exchanges(ctx, script.ExchangesTable, name, func(recs iter.Seq2[*store.Recording, error]) ([]replayindex.Row, error) {
		return script.ExchangeRows(recs, mt)
	})
	if err != nil {
		return nil, err
	}
	return a, a.read(ctx)
}

// memAtOnce returns the index of recs under rules mt, held in memory.
// Rows name a session by its place in recs (from 1), so that sessions
// given without ids of their own are told apart.
func memAtOnce(recs []*recording, mt Match, log *slog.Logger) (*atOnce, error) {
	a := &atOnce{log: log, recs: map[int64]*recording{}}
	rows, err := script.ExchangeRows(func(yield func(*store.Recording, error) bool) {
		for i, rec := range recs {
			a.recs[int64(i+1)] = rec
			r := *rec.Recording
			r.Session.ID = int64(i + 1)
			if !yield(&r, nil) {
				return
			}
		}
	}, mt)
	if err != nil {
		return nil, err
	}
	a.ix = replayindex.MemExchanges(rows)
	return a, a.read(context.Background())
}

// read reads what a holds of every session: whether it holds 2026-07-28
// exchanges and server/discover, and the door shapes.
func (a *atOnce) read(ctx context.Context) error {
	has, err := a.ix.Kind(ctx, script.RowHas)
	if err != nil {
		return err
	}
	for _, h := range has {
		a.discover = a.discover || h.Key == script.HasDiscover
		a.pool = a.pool || h.Key == script.RowPool
	}
	doors, err := a.ix.Kind(ctx, script.RowDoor)
	if err != nil {
		return err
	}
	for _, r := range doors {
		dd, err := reqshape.DecodeDoor(r.Key)
		if err != nil {
			return err
		}
		dd.Refused = r.Info == "refused"
		a.shapes = append(a.shapes, doorShape{Door: dd, sid: r.Session, stid: r.Stream})
	}
	return nil
}

// load returns session id, loaded once for every row that names it.
func (a *atOnce) load(id int64) (*recording, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if rec, ok := a.recs[id]; ok || a.src == nil {
		if !ok {
			return nil, fmt.Errorf("no session %d", id)
		}
		return rec, nil
	}
	rec, err := a.src.load(context.Background(), id)
	if err != nil {
		return nil, err
	}
	a.recs[id] = rec
	return rec, nil
}

// stream returns recording session and its stream id.
func (a *atOnce) stream(session, id int64) (*recording, *store.Stream, error) {
	rec, err := a.load(session)
	if err != nil {
		return nil, nil, err
	}
	st := script.Stream(rec.Recording, id)
	if st == nil {
		return nil, nil, fmt.Errorf("session %d has no stream %d", session, id)
	}
	return rec, st, nil
}

// pick returns the n-th row of kind and key, in recorded order, whose
// info is one of infos, with its recording and stream.
func (a *atOnce) pick(kind, key string, infos []string, n int) (*recording, *store.Stream, bool) {
	x, ok, err := a.ix.At(context.Background(), kind, key, infos, n)
	if err == nil && ok {
		rec, st, err2 := a.stream(x.Session, x.Stream)
		if err2 == nil {
			return rec, st, true
		}
		err = err2
	}
	if err != nil {
		a.log.Warn("reading the replay exchange index failed", "err", err)
	}
	return nil, nil, false
}

// count returns how many rows of kind and key the index holds, by info.
func (a *atOnce) count(kind, key string) []replayindex.Group {
	gs, err := a.ix.Groups(context.Background(), kind, key)
	if err != nil {
		a.log.Warn("reading the replay exchange index failed", "err", err)
	}
	return gs
}
