package replayer

import (
	"context"

	"github.com/mcpvcr/mcpvcr/store"
)

// Load gives s sessions ids of db to replay under s.Match, as replay over
// their transport reads them best. Several sessions are read through a
// Source: the cassette's replay index under s.Match (built now if the
// cassette lacks it), loading only the candidates in play, so that start
// and memory do not grow with the cassette. Over HTTP that holds when the
// cassette's HTTP sessions are conversations only: no 2026-07-28
// exchanges, no sessions without a session id, no OAuth exchanges and no
// request refused at the HTTP level (each of those is answered from every
// session at once); else, and for a single session, they are read now as
// Recordings. With a Source, db must stay open while s serves.
func (s *Server) Load(ctx context.Context, db *store.DB, ids []int64) error {
	if len(ids) > 1 {
		first, err := db.Session(ctx, ids[0])
		if err != nil {
			return err
		}
		lazy := first.Transport == store.Stdio
		if !lazy {
			sum, err := db.SummarizeHTTP(ctx, refusedStatus...)
			if err != nil {
				return err
			}
			lazy = sum.Modern == 0 && sum.Anonymous == 0 && sum.Exchanges == 0 && sum.Answered == 0
		}
		if lazy {
			src, err := newSource(ctx, db, s.Logger, s.Match, ids...)
			s.Source = src
			return err
		}
	}
	recs, err := db.Recordings(ctx, ids...)
	s.Recordings = recs
	return err
}
