package store

import (
	"context"
	"errors"
	"fmt"
)

// Recording is one recorded session as plain data: the session, its
// streams in id order and its frames in seq order. Replay, diff and
// verify read it and never change it.
type Recording struct {
	Session Session
	Streams []Stream
	Frames  []Frame
}

// Recordings reads the sessions with the given ids, or every session when
// none is given, in the order asked. A missing session is an error
// wrapping ErrNotFound.
func (d *DB) Recordings(ctx context.Context, ids ...int64) ([]*Recording, error) {
	if len(ids) == 0 {
		ss, err := d.Sessions(ctx)
		if err != nil {
			return nil, fmt.Errorf("list sessions: %w", err)
		}
		for _, s := range ss {
			ids = append(ids, s.ID)
		}
	}
	recs := make([]*Recording, 0, len(ids))
	for _, id := range ids {
		r, err := d.Recording(ctx, id)
		if err != nil {
			return nil, err
		}
		recs = append(recs, r)
	}
	return recs, nil
}

// Recording reads one session with its streams and frames.
func (d *DB) Recording(ctx context.Context, id int64) (*Recording, error) {
	s, err := d.Session(ctx, id)
	if errors.Is(err, ErrNotFound) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("load session %d: %w", id, err)
	}
	sts, err := d.Streams(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load streams of session %d: %w", id, err)
	}
	fs, err := d.Frames(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("load frames of session %d: %w", id, err)
	}
	return &Recording{Session: s, Streams: sts, Frames: fs}, nil
}

// ProtocolFrames returns the frames of r that carry protocol messages, in
// seq order: not stderr lines, SSE comments or SSE events without data.
func (r *Recording) ProtocolFrames() []*Frame {
	stderr := map[int64]bool{}
	for _, st := range r.Streams {
		if st.Kind == StderrStream {
			stderr[st.ID] = true
		}
	}
	fs := make([]*Frame, 0, len(r.Frames))
	for i := range r.Frames {
		f := &r.Frames[i]
		if stderr[f.StreamID] || f.Comment || (f.SSE && f.Kind == KindEmpty) {
			continue
		}
		fs = append(fs, f)
	}
	return fs
}

// LoadFile reads the sessions with the given ids (every session when none
// is given) from the cassette or JSONL export at path, and closes it: the
// recordings are plain data, and nothing is left to release.
func LoadFile(ctx context.Context, path string, ids ...int64) ([]*Recording, error) {
	d, err := OpenFile(ctx, path)
	if err != nil {
		return nil, err
	}
	recs, err := d.Recordings(ctx, ids...)
	if cerr := d.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close cassette %s: %w", path, cerr)
	}
	if err != nil {
		return nil, err
	}
	return recs, nil
}
