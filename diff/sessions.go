package diff

import (
	"context"

	"github.com/mcpvcr/mcpvcr/store"
)

// Sessions loads sessions old and new from db and compares them with the
// noise mask stored with old plus extra. A missing session is an error
// wrapping store.ErrNotFound; a bad stored mask one wrapping ErrBadPath.
func Sessions(ctx context.Context, db *store.DB, old, new int64, extra Noise) (*Report, error) {
	recs, err := db.Recordings(ctx, old, new)
	if err != nil {
		return nil, err
	}
	noise, err := SessionNoise(recs[0].Session)
	if err != nil {
		return nil, err
	}
	return Compare(recs[0], recs[1], noise.With(extra)), nil
}
