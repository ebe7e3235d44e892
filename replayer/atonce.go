package replayer

// The index of what an HTTP replay answers from every session at once
// rather than from one conversation: the 2026-07-28 exchanges (pool.go),
// the requests a server refused for their shape and the shapes of every
// recorded request (door.go). Reading a
// Source, replay looks a request up in it and loads only the sessions
// the rows it finds name, so that its start and its answers do not grow
// with the cassette. The index is built once per set of sessions and
// matching rules, one session at a time, and stored in the cassette
// (replayindex.PutExchanges) when it can be written and every session
// has ended; else it is held in memory for the run.

import (
	"context"
	"fmt"
	"iter"
	"sync"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/replayindex"
	"github.com/mcpvcr/mcpvcr/internal/reqshape"
	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// atOnceVersion names the row layout of the index; an index of another
// layout is built again.
const atOnceVersion = "x3" // x2: kept in the cassette's cache (replayindex); x3: no OAuth rows (authwire.Handler)

// atOnceTable is the cassette's cache table of the index.
const atOnceTable = "replay exchanges"

// The kinds of rows of the index.
const (
	rowPool     = "pool"     // a 2026-07-28 exchange: key "METHOD body", info its shape
	rowDoor     = "door"     // the first request of a door shape: key the shape, info refused or answered
	rowRefusal  = "refusal"  // a request refused for its shape: key its reqshape.Key, info its body
	rowHas      = "has"      // key "index" always; "discover" when a client sent server/discover
	hasIndex    = "index"    //
	hasDiscover = "discover" //
)

// atOnce is a Source's index of what HTTP replay answers from every
// session at once, under one set of matching rules. It is safe for
// concurrent use.
type atOnce struct {
	src    *Source
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
	name := atOnceVersion + " " + replayindex.Name(modeOf(mt), s.ix.IDs)
	a := &atOnce{src: s, recs: map[int64]*recording{}}
	var err error
	a.ix, a.stored, err = s.ix.Exchanges(ctx, atOnceTable, name, func(recs iter.Seq2[*store.Recording, error]) ([]replayindex.Row, error) {
		return exchangeRows(recs, mt)
	})
	if err != nil {
		return nil, err
	}
	has, err := a.ix.Kind(ctx, rowHas)
	if err != nil {
		return nil, err
	}
	for _, h := range has {
		a.discover = a.discover || h.Key == hasDiscover
		a.pool = a.pool || h.Key == rowPool
	}
	doors, err := a.ix.Kind(ctx, rowDoor)
	if err != nil {
		return nil, err
	}
	for _, r := range doors {
		dd, err := reqshape.DecodeDoor(r.Key)
		if err != nil {
			return nil, err
		}
		dd.Refused = r.Info == "refused"
		a.shapes = append(a.shapes, doorShape{Door: dd, sid: r.Session, stid: r.Stream})
	}
	return a, nil
}

// exchangeRows returns the rows of the index of sessions recs under mt,
// read one at a time.
func exchangeRows(recs iter.Seq2[*store.Recording, error], mt Match) ([]replayindex.Row, error) {
	rows := []replayindex.Row{{Kind: rowHas, Key: hasIndex}}
	pool, discover := false, false
	doors := map[string]bool{}
	add := func(rec *recording, st *store.Stream, kind, key, info string) {
		rows = append(rows, replayindex.Row{Kind: kind, Key: key, Info: info, Ord: int64(len(rows)), Session: rec.Session.ID, Stream: st.ID})
	}
	for r, err := range recs {
		if err != nil {
			return nil, err
		}
		rec := &recording{Recording: r}
		if rec.Session.Transport != store.StreamableHTTP && rec.Session.Transport != store.LegacySSE {
			continue
		}
		first := map[int64]*store.Frame{}
		for i := range rec.Frames {
			f := &rec.Frames[i]
			if f.Direction != store.ClientToServer {
				continue
			}
			if first[f.StreamID] == nil {
				first[f.StreamID] = f
			}
			discover = discover || f.Method == "server/discover"
		}
		isPooled := pooled(rec)
		for i := range rec.Streams {
			st := &rec.Streams[i]
			refused := script.Refused(st)
			body := ""
			if f := first[st.ID]; f != nil {
				body = mt.RequestKey(jsonrpc.Parse(f.Data))
			}
			switch st.Kind {
			case store.PostStream, store.GetStream, store.ResumeStream, store.DeleteStream, store.ListenStream, store.SSEGetStream:
				d := recordedDoor(rec, st)
				info := "answered"
				if refused {
					info = "refused"
					for _, k := range d.Keys() {
						add(rec, st, rowRefusal, k.String(), body)
					}
				}
				if key := d.Encode(); !doors[key+" "+info] {
					doors[key+" "+info] = true
					add(rec, st, rowDoor, key, info)
				}
			}
			if isPooled && pooledStream(st) {
				pool = true
				add(rec, st, rowPool, st.Method+" "+body, reqshape.Info(reqshape.Recorded(st), refused))
			}
		}
	}
	if pool {
		rows = append(rows, replayindex.Row{Kind: rowHas, Key: rowPool, Ord: int64(len(rows))})
	}
	if discover {
		rows = append(rows, replayindex.Row{Kind: rowHas, Key: hasDiscover, Ord: int64(len(rows))})
	}
	return rows, nil
}

// load returns session id, loaded once for every row that names it.
func (a *atOnce) load(id int64) (*recording, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if rec, ok := a.recs[id]; ok {
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
		a.src.ix.Logger.Warn("reading the replay exchange index failed", "err", err)
	}
	return nil, nil, false
}

// count returns how many rows of kind and key the index holds, by info.
func (a *atOnce) count(kind, key string) []replayindex.Group {
	gs, err := a.ix.Groups(context.Background(), kind, key)
	if err != nil {
		a.src.ix.Logger.Warn("reading the replay exchange index failed", "err", err)
	}
	return gs
}

// pooledStream reports whether st is an exchange of a pooled session.
func pooledStream(st *store.Stream) bool {
	switch st.Kind {
	case store.PostStream, store.ListenStream, store.GetStream, store.SSEGetStream, store.DeleteStream:
		return true
	}
	return false
}
