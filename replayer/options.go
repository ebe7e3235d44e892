package replayer

import (
	"context"

	"github.com/mcpvcr/mcpvcr/store"
)

// Load gives s sessions ids of db to replay: through a Source (the
// cassette's replay index, loading only the candidates in play) when lazy
// is set and there are several, else as Recordings read now. With a
// Source, db must stay open while s serves.
func (s *Server) Load(ctx context.Context, db *store.DB, ids []int64, lazy bool) error {
	if lazy && len(ids) > 1 {
		src, err := NewSource(ctx, db, s.Logger, ids...)
		s.Source = src
		return err
	}
	recs, err := db.Recordings(ctx, ids...)
	s.Recordings = recs
	return err
}
