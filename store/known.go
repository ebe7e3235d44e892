package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// What a DB knows exists. Every write names a session, and a frame its
// stream: the DB checks them before it queues the write (checkSession,
// checkStream), from memory while it can, because the writer would only
// find out after the write was accepted. A recorder that runs all day
// creates sessions and streams without end, so the DB remembers only
// those it used last (knownCache): one it has forgotten is looked up in
// the file again. A session or stream created and forgotten before its
// row was committed is not in the file yet: a lookup that finds nothing
// waits for the writer to commit what is queued (Flush), and looks
// again, before it calls the ID unknown.

// knownGeneration is how many IDs a knownCache holds in each of its two
// generations: a recorder's live sessions and streams (tens to
// thousands) fit in one. A variable, so that tests can shrink it.
var knownGeneration = 4096

// lookedUp, if not nil, runs when a lookup in the file found nothing,
// before lookUpAgain waits for the writer: tests hold the writer until
// then.
var lookedUp func()

// knownCache maps IDs to what the DB knows of them, keeping those used in
// the last two generations of knownGeneration IDs: an ID used again is
// moved into the newer generation, and the older one is dropped whole
// when the newer one is full. Guarded by DB.mu.
type knownCache[V any] struct {
	cur, old map[int64]V
}

func newKnownCache[V any]() knownCache[V] {
	return knownCache[V]{cur: map[int64]V{}, old: map[int64]V{}}
}

// get returns what is known of id.
func (c *knownCache[V]) get(id int64) (V, bool) {
	if v, ok := c.cur[id]; ok {
		return v, true
	}
	v, ok := c.old[id]
	if ok {
		delete(c.old, id)
		c.put(id, v)
	}
	return v, ok
}

// put sets what is known of id.
func (c *knownCache[V]) put(id int64, v V) {
	if _, ok := c.cur[id]; !ok && len(c.cur) >= knownGeneration {
		clear(c.old)
		c.old, c.cur = c.cur, c.old
	}
	delete(c.old, id)
	c.cur[id] = v
}

// forget drops id.
func (c *knownCache[V]) forget(id int64) {
	delete(c.cur, id)
	delete(c.old, id)
}

// len returns how many IDs c holds.
func (c *knownCache[V]) len() int { return len(c.cur) + len(c.old) }

// each calls fn with every ID c holds and what is known of it.
func (c *knownCache[V]) each(fn func(id int64, v V)) {
	for _, m := range []map[int64]V{c.cur, c.old} {
		for id, v := range m {
			fn(id, v)
		}
	}
}

// checkSession returns ErrNotFound unless session id exists or is
// queued. Sessions this DB does not remember are looked up in the file.
func (d *DB) checkSession(ctx context.Context, id int64) error {
	ok, err := known(d, &d.sessions, id, func() (bool, error) {
		return lookUpAgain(ctx, d, func() (bool, error) {
			err := d.rdb.QueryRowContext(ctx, "SELECT 1 FROM sessions WHERE id = ?", id).Scan(new(int))
			return err == nil, err
		})
	})
	switch {
	case err != nil:
		return fmt.Errorf("look up session %d: %w", id, err)
	case !ok:
		return fmt.Errorf("session %d: %w", id, ErrNotFound)
	}
	return nil
}

// checkStream returns an error unless stream id exists (or is queued) and
// belongs to session sessionID.
func (d *DB) checkStream(ctx context.Context, id, sessionID int64) error {
	owner, err := known(d, &d.streams, id, func() (int64, error) { return d.lookUpStream(ctx, id) })
	switch {
	case err != nil:
		return fmt.Errorf("look up stream %d: %w", id, err)
	case owner == 0:
		return fmt.Errorf("stream %d: %w", id, ErrNotFound)
	case owner != sessionID:
		return invalid("stream %d (it belongs to session %d, not %d)", id, owner, sessionID)
	}
	return nil
}

// known returns what c knows of id; if c does not know it, what find
// reads from the file (the zero value: no such row), which c then
// remembers if it is not zero.
func known[V comparable](d *DB, c *knownCache[V], id int64, find func() (V, error)) (V, error) {
	d.mu.Lock()
	v, seen := c.get(id)
	d.mu.Unlock()
	var zero V
	switch {
	case seen || id <= 0:
		return v, nil
	case d.q.isClosed():
		return zero, ErrClosed
	}
	v, err := find()
	if err != nil || v == zero {
		return zero, err
	}
	d.mu.Lock()
	if _, seen := c.get(id); !seen {
		c.put(id, v)
	}
	d.mu.Unlock()
	return v, nil
}

// lookUpAgain runs find, a lookup in the file, and, if it finds no row,
// waits for the writer to commit what is queued and runs it once more: a
// row created by this DB and forgotten (see knownCache) may be queued
// still. It reports whether find found the row.
func lookUpAgain(ctx context.Context, d *DB, find func() (bool, error)) (bool, error) {
	found, err := find()
	if !errors.Is(err, sql.ErrNoRows) {
		return found, err
	}
	if lookedUp != nil {
		lookedUp()
	}
	if d.Flush(ctx) != nil {
		return false, nil // no writer to wait for: the file has the last word
	}
	found, err = find()
	if errors.Is(err, sql.ErrNoRows) {
		err = nil
	}
	return found, err
}

// lookUpStream reads the session of stream id from the file (see
// lookUpAgain), 0 if there is no such stream. It is a function of its own
// so that checkStream's owner, which Scan would take the address of,
// stays on the stack: checkStream runs for every frame.
func (d *DB) lookUpStream(ctx context.Context, id int64) (int64, error) {
	var owner int64
	_, err := lookUpAgain(ctx, d, func() (bool, error) {
		err := d.rdb.QueryRowContext(ctx, "SELECT session_id FROM streams WHERE id = ?", id).Scan(&owner)
		return err == nil, err
	})
	return owner, err
}
