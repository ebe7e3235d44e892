package replayer

import (
	"context"

	"github.com/mcpvcr/mcpvcr/internal/replayindex"
	"github.com/mcpvcr/mcpvcr/store"
)

// Load gives s sessions ids of db to replay under s.Match, as replay over
// their transport reads them best. Several sessions are read through a
// Source: the cassette's replay index under s.Match (built now if the
// cassette lacks it), loading only the candidates in play, so that start
// and memory do not grow with the cassette. Over HTTP, what is answered
// from every session at once rather than from one conversation (the
// 2026-07-28 exchanges, requests refused for their shape) is read
// likewise, from an index of those exchanges (built
// now, and stored, if the cassette lacks it). A single session is read
// now as a Recording. With a Source, db must stay open while s serves.
func (s *Server) Load(ctx context.Context, db *store.DB, ids []int64) error {
	if len(ids) > 1 {
		first, err := db.Session(ctx, ids[0])
		if err != nil {
			return err
		}
		src, err := newSource(ctx, db, s.Logger, s.Match, ids...)
		if err != nil {
			return err
		}
		s.Source = src
		if first.Transport != store.Stdio {
			a, err := src.atOnce(ctx, s.Match)
			if err != nil {
				return err
			}
			s.aoOnce.Do(func() { s.ao = a })
		}
		return nil
	}
	recs, err := db.Recordings(ctx, ids...)
	s.Recordings = recs
	return err
}

// atOnce returns the index of what HTTP replay answers from every
// session at once, read once: the Source's, or one held in memory of
// the sessions given (or, when the Source's cannot be read, of every
// session it holds).
func (s *Server) atOnce() *atOnce {
	s.aoOnce.Do(func() {
		if s.lazyHTTP() {
			a, err := s.Source.atOnce(context.Background(), s.Match)
			if err == nil {
				s.ao = a
				return
			}
			s.logger().Warn("reading the replay exchange index failed; reading every session", "err", err)
		}
		a, err := memAtOnce(s.httpRecordings(), s.Match, s.logger())
		if err != nil {
			s.logger().Warn("indexing the recorded exchanges failed", "err", err)
			a = &atOnce{log: s.logger(), ix: replayindex.MemExchanges(nil)}
		}
		s.ao = a
	})
	return s.ao
}
