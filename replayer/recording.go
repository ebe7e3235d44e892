package replayer

import (
	"context"
	"sync"

	"github.com/mcpvcr/mcpvcr/internal/script"
	"github.com/mcpvcr/mcpvcr/store"
)

// recording is one recorded session with what replay derives from it
// once and shares between the clients replaying it.
type recording struct {
	*store.Recording

	byStreamOnce sync.Once
	byStream     map[int64][]*store.Frame  // stream id -> its server frames
	tmplMu       sync.Mutex                // guards tmpls
	tmpls        map[string]*script.Script // by Match.String(); see template
}

// serverFrames returns the server frames of each stream, in order,
// indexed once. Frames must not change after the first call.
func (r *recording) serverFrames() map[int64][]*store.Frame {
	r.byStreamOnce.Do(func() {
		r.byStream = map[int64][]*store.Frame{}
		for i := range r.Frames {
			if f := &r.Frames[i]; f.Direction == store.ServerToClient {
				r.byStream[f.StreamID] = append(r.byStream[f.StreamID], f)
			}
		}
	})
	return r.byStream
}

// load reads the sessions with the given ids from db, or every session
// when none is given.
func load(ctx context.Context, db *store.DB, ids ...int64) ([]*recording, error) {
	recs, err := db.Recordings(ctx, ids...)
	if err != nil {
		return nil, err
	}
	return wrap(recs), nil
}

// wrap gives each recording replay's caches.
func wrap(recs []*store.Recording) []*recording {
	out := make([]*recording, len(recs))
	for i, r := range recs {
		out[i] = &recording{Recording: r}
	}
	return out
}
