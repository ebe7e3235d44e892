package script

import (
	"iter"
	"net/http"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/match"
	"github.com/mcpvcr/mcpvcr/internal/replayindex"
	"github.com/mcpvcr/mcpvcr/internal/reqshape"
	"github.com/mcpvcr/mcpvcr/store"
)

// Mode names the hashing of Hashes under rules mt: a stored hash or
// tree of another mode is built again, and each set of matching rules
// has a mode (and a tree) of its own, since the hashes of client frames
// are their match keys under the rules.
func Mode(mt match.Match) string { return "v6 " + mt.String() }

// ExchangesVersion names the row layout of the index; an index of another
// layout is built again.
const ExchangesVersion = "x3"

// ExchangesTable is the cassette's cache table of the index.
const ExchangesTable = "replay exchanges"

// The kinds of exchange rows (ExchangeRows).
const (
	RowPool     = "pool"     // a 2026-07-28 exchange: key "METHOD body", info its shape
	RowDoor     = "door"     // the first request of a door shape: key the shape, info refused or answered
	RowRefusal  = "refusal"  // a request refused for its shape: key its reqshape.Key, info its body
	RowHas      = "has"      // key "index" always; "discover" when a client sent server/discover
	HasIndex    = "index"    //
	HasDiscover = "discover" //
)

// ExchangeRows returns the rows of the index of what HTTP replay answers
// from every session at once rather than from one conversation (the
// 2026-07-28 exchanges, the requests a server refused for their shape,
// the shapes of every recorded request) of sessions recs under mt, read
// one at a time.
func ExchangeRows(recs iter.Seq2[*store.Recording, error], mt match.Match) ([]replayindex.Row, error) {
	rows := []replayindex.Row{{Kind: RowHas, Key: HasIndex}}
	pool, discover := false, false
	doors := map[string]bool{}
	add := func(rec *store.Recording, st *store.Stream, kind, key, info string) {
		rows = append(rows, replayindex.Row{Kind: kind, Key: key, Info: info, Ord: int64(len(rows)), Session: rec.Session.ID, Stream: st.ID})
	}
	for r, err := range recs {
		if err != nil {
			return nil, err
		}
		rec := r
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
		isPooled := Pooled(rec)
		for i := range rec.Streams {
			st := &rec.Streams[i]
			refused := Refused(st)
			body := ""
			if f := first[st.ID]; f != nil {
				body = mt.RequestKey(jsonrpc.Parse(f.Data))
			}
			switch st.Kind {
			case store.PostStream, store.GetStream, store.ResumeStream, store.DeleteStream, store.ListenStream, store.SSEGetStream:
				d := Door(st)
				info := "answered"
				if refused {
					info = "refused"
					for _, k := range d.Keys() {
						add(rec, st, RowRefusal, k.String(), body)
					}
				}
				if key := d.Encode(); !doors[key+" "+info] {
					doors[key+" "+info] = true
					add(rec, st, RowDoor, key, info)
				}
			}
			if isPooled && PooledStream(st) {
				pool = true
				add(rec, st, RowPool, st.Method+" "+body, reqshape.Info(reqshape.Recorded(st), refused))
			}
		}
	}
	if pool {
		rows = append(rows, replayindex.Row{Kind: RowHas, Key: RowPool, Ord: int64(len(rows))})
	}
	if discover {
		rows = append(rows, replayindex.Row{Kind: RowHas, Key: HasDiscover, Ord: int64(len(rows))})
	}
	return rows, nil
}

// Door returns the door shape of recorded request stream st.
func Door(st *store.Stream) reqshape.Door {
	h := st.RequestHeader
	if h == nil {
		h = http.Header{}
	}
	d := reqshape.DoorOf(st.Method, h, reqshape.Recorded(st))
	if st.Kind == store.ResumeStream || st.LastEventID != "" {
		d.Resume = true
	}
	d.Refused = Refused(st)
	return d
}

// Pooled reports whether rec's exchanges are replayed from the pool: a
// 2026-07-28 session, or a run of refusals with no session id (an
// initialize and a GET that a 2026-07-28 server refused, say), which
// holds no conversation to follow.
func Pooled(rec *store.Recording) bool {
	if rec.Session.Transport != store.StreamableHTTP {
		return false
	}
	if rec.Session.Era == store.EraModern {
		return true
	}
	if rec.Session.ExternalID != "" || len(rec.Streams) == 0 {
		return false
	}
	for _, st := range rec.Streams {
		if !Refused(&st) {
			return false
		}
	}
	return true
}

// PooledStream reports whether st is an exchange of a pooled session.
func PooledStream(st *store.Stream) bool {
	switch st.Kind {
	case store.PostStream, store.ListenStream, store.GetStream, store.SSEGetStream, store.DeleteStream:
		return true
	}
	return false
}
