package store

import (
	"context"
	"fmt"
)

// Session and stream IDs come from the file, not from counters kept in
// memory, so that any number of processes can record into one cassette at
// once. A DB reserves a block of IDs at a time by raising the table's
// AUTOINCREMENT counter in sqlite_sequence inside a write transaction,
// which SQLite gives one process at a time; no other process can then be
// handed the same IDs. The counter only ever grows, so an ID is never
// given twice, not even that of a deleted session.
//
// IDs of a block may be handed out before the transaction that reserved
// it commits: until it does, it holds the write lock, so no other process
// can reserve; and if it never commits, nothing written with those IDs is
// either (the writer's failure is sticky).
//
// The next block is asked for once half of the current one is used, so
// that CreateSession and OpenStream, which the forwarding path calls, do
// not wait for the file in the steady state. At Close, the DB gives back
// the IDs it did not use if no one reserved after it, so that one process
// recording alone numbers its sessions 1, 2, 3, ...

// Block sizes, a trade between how often the writer reserves and the gaps
// left in the numbering when several processes record at once.
const (
	sessionBlock = 16
	streamBlock  = 512
)

// idPool hands out the IDs of one table. Its fields are guarded by DB.mu.
type idPool struct {
	table string // sessions or streams
	block int64  // IDs reserved at a time

	free     []idRange     // reserved and not yet handed out, in order
	used     int64         // the largest ID handed out, 0 if none
	reserved int64         // the end of the last block reserved, 0 if none; it starts at reserved-block+1
	asking   bool          // a reservation is queued for the writer
	arrived  chan struct{} // closed when the queued reservation is done; nil if no one waits
}

// idRange is the IDs from next to end, inclusive.
type idRange struct{ next, end int64 }

func newIDPool(table string, block int64) *idPool { return &idPool{table: table, block: block} }

// take hands out the next free ID, reporting false if there is none.
func (p *idPool) take() (int64, bool) {
	for len(p.free) > 0 {
		r := &p.free[0]
		if r.next > r.end {
			p.free = p.free[1:]
			continue
		}
		id := r.next
		r.next++
		p.used = max(p.used, id)
		return id, true
	}
	return 0, false
}

// left returns how many IDs are free.
func (p *idPool) left() int64 {
	var n int64
	for _, r := range p.free {
		n += r.end - r.next + 1
	}
	return n
}

// newID hands out an ID of p, asking the writer for a block when p runs
// low, and waiting for it only when p is empty.
func (d *DB) newID(ctx context.Context, p *idPool) (int64, error) {
	d.mu.Lock()
	for {
		id, ok := p.take()
		ask := !p.asking && p.left() < p.block/2
		if ask {
			p.asking = true
		}
		var wait chan struct{}
		if !ok {
			if p.arrived == nil {
				p.arrived = make(chan struct{})
			}
			wait = p.arrived
		}
		d.mu.Unlock()
		if ask {
			if err := d.send(ctx, op{kind: opReserve, pool: p}); err != nil {
				d.mu.Lock()
				p.asking = false
				d.mu.Unlock()
				if !ok {
					return 0, err
				}
			}
		}
		if ok {
			return id, nil
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if err := d.Err(); err != nil {
			return 0, err
		}
		d.mu.Lock()
	}
}

// Statements that reserve and give back IDs. The counter is raised from
// the largest ID in the table too, for files whose counter lags behind.
var (
	reserveIDsSQL = map[string]string{
		"sessions": `UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(id), 0) FROM sessions)) + ?
			WHERE name = 'sessions' RETURNING seq`,
		"streams": `UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(id), 0) FROM streams)) + ?
			WHERE name = 'streams' RETURNING seq`,
	}
	startIDsSQL = map[string]string{
		"sessions": `INSERT INTO sqlite_sequence (name, seq) SELECT 'sessions', coalesce(max(id), 0) + ? FROM sessions RETURNING seq`,
		"streams":  `INSERT INTO sqlite_sequence (name, seq) SELECT 'streams', coalesce(max(id), 0) + ? FROM streams RETURNING seq`,
	}
	releaseIDsSQL = `UPDATE sqlite_sequence SET seq = ? WHERE name = ? AND seq = ?`
)

// reserveIDs raises table's counter by n inside t and returns the last ID
// reserved: the block is end-n+1 to end.
func (t *txn) reserveIDs(table string, n int64) (end int64, err error) {
	end, err = t.queryInt(reserveIDsSQL[table], n)
	if err == errNoRows {
		end, err = t.queryInt(startIDsSQL[table], n)
	}
	if err != nil {
		return 0, fmt.Errorf("reserve %s ids: %w", table, err)
	}
	return end, nil
}

// reserve reserves a block for p inside the writer's transaction t and
// wakes those who wait for it. After an error p stays empty; the waiters
// then see the writer's sticky error.
func (d *DB) reserve(t *txn, p *idPool) error {
	end, err := t.reserveIDs(p.table, p.block)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err == nil {
		p.free = append(p.free, idRange{next: end - p.block + 1, end: end})
		p.reserved = end
	}
	p.asking = false
	if p.arrived != nil {
		close(p.arrived)
		p.arrived = nil
	}
	return err
}

// wakeIDWaiters wakes those who wait for a reservation that will not come,
// the writer having failed.
func (d *DB) wakeIDWaiters(p *idPool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p.asking = false
	if p.arrived != nil {
		close(p.arrived)
		p.arrived = nil
	}
}

// release gives back, inside t, the IDs of p's last block that were not
// handed out, if no one has reserved since. IDs below that block may be
// another process's, so they stay reserved. The caller makes sure that
// no more IDs are handed out (the queue is closed).
func (d *DB) release(t *txn, p *idPool) error {
	d.mu.Lock()
	used, reserved := p.used, p.reserved
	d.mu.Unlock()
	if reserved == 0 || used >= reserved {
		return nil
	}
	keep := max(used, reserved-p.block)
	if _, err := t.exec(releaseIDsSQL, keep, p.table, reserved); err != nil {
		return fmt.Errorf("give back %s ids: %w", p.table, err)
	}
	return nil
}

// idInTxn hands out an ID of p from inside the writer's transaction t,
// which may yet be rolled back (Import's is, on a bad line). A free ID of
// p is used if there is one; otherwise one ID is reserved in t and not
// added to p, so that a rollback cannot leave p holding IDs the file
// does not know are taken.
func (d *DB) idInTxn(t *txn, p *idPool) (int64, error) {
	d.mu.Lock()
	id, ok := p.take()
	d.mu.Unlock()
	if ok {
		return id, nil
	}
	return t.reserveIDs(p.table, 1)
}
