package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Packs (migration 6 in schema.sql): a run of a session's server frames
// with consecutive seqs, stored as one row of frame_packs rather than a
// row of frames each. SQLite's work per row (and per index entry) was
// most of the writer's cost of a small frame, and the SSE events and
// notifications of a busy server come in such runs. Readers never see a
// pack: eachFrame and checkFrames merge the frames of packs with the rows
// of frames by seq, so that every reader (show, replay, export, check,
// the replay index, the views) gets the same frames either way.
//
// A pack's bytes (stored compressed when that saves, see packz.go) are
// packFormat, then for each frame, in seq order:
//
//	flags      uvarint  packSSE | packHasEventID | ...
//	stream_id  uvarint  0 when none
//	direction  uvarint  Direction's value
//	offset_ns  varint
//	kind       uvarint  Kind's value
//	rpc_id, method, sse_id, sse_event   uvarint length, then the bytes
//	sse_retry  varint
//	oversize   uvarint
//	raw        uvarint length, then the bytes
//	data       (when packData) uvarint length, then the bytes
//
// A run of SSE events (Frame.Events, from schema version 8 on) is one
// entry of its own, for seqs seq to seq+count-1:
//
//	flags      uvarint  packRun | packSSE
//	stream_id  uvarint
//	direction  uvarint
//	offset_ns  varint
//	count      uvarint  the events in the run, at least 1
//	raw        uvarint length, then the bytes of their blocks
//
// A read splits raw into its count events and derives each (see
// runFrames), as the recorder would have; it is damaged if raw does not
// split into exactly count events that a run may hold (internal/sserun).
//
// The values of Direction and Kind are part of the format: never
// renumber them.

// packFormat is the first byte of every pack.
const packFormat = 1

// Flags of a frame in a pack.
const (
	packSSE = 1 << iota
	packHasEventID
	packComment
	packBatch
	packMalformed
	packData // the data column is not NULL (see storedData)
	packRun  // a run of SSE events (see above)
)

// runsVersion is the schema version from which packs may hold runs of
// SSE events: a build that cannot read them refuses the file as newer
// (ErrNewerSchema) rather than call its packs damaged.
const runsVersion = 8

// maxRunBytes bounds the bytes of one run of events (Frame.Events). The
// recorder makes a run of what one read of a stream completed, which
// its copy buffers bound far lower.
const maxRunBytes = 64 << 10

// packsVersion is the schema version that added frame_packs.
const packsVersion = 6

const insertPackSQL = `INSERT INTO frame_packs (session_id, first_seq, last_seq, frames) VALUES (?, ?, ?, ?)`

// packable reports whether f may go in a pack: a server frame with no
// batch members (their rows refer to the frame's row), small enough to
// have been chunked. Client frames stay rows, for HTTPClientMethod.
func packable(f *Frame) bool {
	if f.Events > 0 {
		return true // Append bounds its bytes (maxRunBytes)
	}
	return f.Direction == ServerToClient && len(f.Members) == 0 && len(f.Raw)+len(f.Data) <= maxChunked
}

// lastSeq returns the seq of f's last frame: its own, or that of the last
// event of a run.
func lastSeq(f *Frame) int64 { return f.Seq + int64(max(f.Events, 1)) - 1 }

// appendPacked appends f's columns to a pack.
func appendPacked(dst []byte, f *Frame) []byte {
	if f.Events > 0 {
		dst = binary.AppendUvarint(dst, packRun|packSSE)
		dst = binary.AppendUvarint(dst, uint64(f.StreamID))
		dst = binary.AppendUvarint(dst, uint64(f.Direction))
		dst = binary.AppendVarint(dst, int64(f.Offset))
		dst = binary.AppendUvarint(dst, uint64(f.Events))
		dst = binary.AppendUvarint(dst, uint64(len(f.Raw)))
		return append(dst, f.Raw...)
	}
	var flags uint64
	for _, b := range [...]struct {
		on   bool
		flag uint64
	}{{f.SSE, packSSE}, {f.HasEventID, packHasEventID}, {f.Comment, packComment}, {f.Batch, packBatch}, {f.Malformed, packMalformed}} {
		if b.on {
			flags |= b.flag
		}
	}
	data, _ := storedData(f).([]byte)
	if data != nil {
		flags |= packData
	}
	dst = binary.AppendUvarint(dst, flags)
	dst = binary.AppendUvarint(dst, uint64(f.StreamID))
	dst = binary.AppendUvarint(dst, uint64(f.Direction))
	dst = binary.AppendVarint(dst, int64(f.Offset))
	dst = binary.AppendUvarint(dst, uint64(f.Kind))
	for _, s := range [...]string{f.ID, f.Method, f.EventID, f.Event} {
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.AppendVarint(dst, int64(f.Retry))
	dst = binary.AppendUvarint(dst, uint64(f.Oversize))
	dst = binary.AppendUvarint(dst, uint64(len(f.Raw)))
	dst = append(dst, f.Raw...)
	if data != nil {
		dst = binary.AppendUvarint(dst, uint64(len(data)))
		dst = append(dst, data...)
	}
	return dst
}

// ErrDamagedPack is the error of reading a pack of frames whose bytes do
// not decode: those frames are lost, the others can still be read
// (DB.Rescue).
var ErrDamagedPack = errors.New("damaged pack")

// errBadPack is ErrDamagedPack, as the package's code names it.
var errBadPack = ErrDamagedPack

// packDecoder reads the values of a pack in order.
type packDecoder struct {
	b   []byte
	err error
}

func (d *packDecoder) uvarint() uint64 { return decodeVarint(d, binary.Uvarint) }

func (d *packDecoder) varint() int64 { return decodeVarint(d, binary.Varint) }

// decodeVarint reads the next value of d with read (binary.Uvarint or
// binary.Varint).
func decodeVarint[T uint64 | int64](d *packDecoder, read func([]byte) (T, int)) T {
	v, n := read(d.b)
	if n <= 0 {
		d.fail()
		return 0
	}
	d.b = d.b[n:]
	return v
}

// bytes returns the next length-prefixed bytes, which alias the pack.
func (d *packDecoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil || n > uint64(len(d.b)) {
		d.fail()
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *packDecoder) fail() {
	if d.err == nil {
		d.err = errBadPack
	}
	d.b = nil
}

// unpack decodes the frames first to last of a session's pack b and calls
// fn with each, in seq order; fn may keep the frame (its Raw and Data
// alias b). It fails with errBadPack if b does not hold exactly those
// frames.
func unpack(sessionID, first, last int64, b []byte, fn func(*Frame) error) error {
	if err := checkClaim(sessionID, first, last); err != nil {
		return err
	}
	b, err := decompressPack(b, last-first+1)
	if err != nil {
		return fmt.Errorf("session %d: frames %d to %d: %w", sessionID, first, last, err)
	}
	if len(b) == 0 || b[0] != packFormat {
		return fmt.Errorf("session %d: frames %d to %d: %w", sessionID, first, last, errBadPack)
	}
	d := &packDecoder{b: b[1:]}
	entries := 0
	for seq := first; seq <= last; seq++ {
		if entries++; entries > maxPackFrames {
			return tooManyEntries(sessionID, first, last)
		}
		f := &Frame{SessionID: sessionID, Seq: seq}
		flags := d.uvarint()
		if flags&packRun != 0 {
			run := &Frame{SessionID: sessionID, Seq: seq, SSE: true}
			run.StreamID = int64(d.uvarint())
			run.Direction = Direction(d.uvarint())
			run.Offset = time.Duration(d.varint())
			n := d.uvarint()
			run.Raw = d.bytes()
			if d.err == nil && (flags != packRun|packSSE || n == 0 || n > uint64(last-seq+1)) {
				d.fail()
			}
			if d.err != nil {
				return fmt.Errorf("session %d: frame %d of pack %d to %d: %w", sessionID, seq, first, last, d.err)
			}
			run.Events = int(n)
			fs, err := runFrames(run)
			if err != nil {
				return fmt.Errorf("session %d: frames %d to %d of pack %d to %d: %w: %v", sessionID, seq, lastSeq(run), first, last, errBadPack, err)
			}
			for _, f := range fs {
				if err := fn(f); err != nil {
					return err
				}
			}
			seq = lastSeq(run)
			continue
		}
		f.StreamID = int64(d.uvarint())
		f.Direction = Direction(d.uvarint())
		f.Offset = time.Duration(d.varint())
		f.Kind = Kind(d.uvarint())
		f.ID, f.Method, f.EventID, f.Event = string(d.bytes()), string(d.bytes()), string(d.bytes()), string(d.bytes())
		f.Retry = int(d.varint())
		f.Oversize = int64(d.uvarint())
		f.Raw = nilIfEmpty(d.bytes())
		var data []byte
		if flags&packData != 0 {
			data = d.bytes()
		}
		if d.err != nil {
			return fmt.Errorf("session %d: frame %d of pack %d to %d: %w", sessionID, seq, first, last, d.err)
		}
		f.SSE, f.HasEventID, f.Comment = flags&packSSE != 0, flags&packHasEventID != 0, flags&packComment != 0
		f.Batch, f.Malformed = flags&packBatch != 0, flags&packMalformed != 0
		switch {
		case flags&packData != 0:
			f.Data = nilIfEmpty(data)
		case f.SSE:
			f.Data = sseData(f.Raw) // NULL: the data of the raw block
		default:
			f.Data = f.Raw // NULL: the payload is the raw bytes
		}
		if err := fn(f); err != nil {
			return err
		}
	}
	if len(d.b) != 0 {
		return fmt.Errorf("session %d: frames %d to %d: %w (bytes left over)", sessionID, first, last, errBadPack)
	}
	return nil
}

// packCursor reads the frames of packs in order, from a query that
// returns session_id, first_seq, last_seq, frames ordered by session_id
// and first_seq.
type packCursor struct {
	rows *sql.Rows
	buf  []*Frame // the frames of the current pack not yet taken
	err  error
	// skip, when set, is called with the error of each pack whose bytes
	// do not decode (errBadPack), which the cursor then passes over
	// rather than fail: a rescue of what can be read (DB.Rescue).
	skip func(error)
}

func openPacks(ctx context.Context, tx *sql.Tx, where string, args ...any) (*packCursor, error) {
	rows, err := tx.QueryContext(ctx, "SELECT session_id, first_seq, last_seq, frames FROM frame_packs "+where+" ORDER BY session_id, first_seq", args...)
	if err != nil {
		return nil, err
	}
	return &packCursor{rows: rows}, nil
}

// next returns the next frame of the packs, nil after the last.
func (c *packCursor) next() (*Frame, error) {
	for len(c.buf) == 0 {
		if c.err != nil {
			return nil, c.err
		}
		if !c.rows.Next() {
			return nil, c.rows.Err()
		}
		var sid, first, last int64
		var b []byte
		if err := c.rows.Scan(&sid, &first, &last, &b); err != nil {
			return nil, err
		}
		c.err = unpack(sid, first, last, b, func(f *Frame) error {
			c.buf = append(c.buf, f)
			return nil
		})
		if c.err != nil {
			clear(c.buf)
			c.buf = c.buf[:0]
			if c.skip != nil && errors.Is(c.err, errBadPack) {
				c.skip(c.err)
				c.err = nil
			}
		}
	}
	f := c.buf[0]
	c.buf[0] = nil
	c.buf = c.buf[1:]
	return f, nil
}

func (c *packCursor) close() {
	if c != nil {
		c.rows.Close()
	}
}

// before reports whether frame a comes before frame b in a cassette's
// order: by session, then seq. A nil frame comes after every other.
func before(a, b *Frame) bool {
	switch {
	case a == nil:
		return false
	case b == nil:
		return true
	case a.SessionID != b.SessionID:
		return a.SessionID < b.SessionID
	}
	return a.Seq < b.Seq
}

// putPack inserts fs, frames of one session with consecutive seqs, as
// one pack, encoded in b.plain and compressed in b.z (see packz.go),
// which it keeps for reuse.
func (t *txn) putPack(fs []*Frame, b *packBufs) error {
	b.plain = append(b.plain[:0], packFormat)
	for _, f := range fs {
		b.plain = appendPacked(b.plain, f)
	}
	var stored []byte
	stored, b.z = compressPack(b.z, b.plain)
	first, last := fs[0].Seq, lastSeq(fs[len(fs)-1])
	err := t.run(t.s.insertPack, t.setArgs(fs[0].SessionID, first, last, stored))
	if err != nil {
		return fmt.Errorf("insert frames %d to %d of session %d: %w", first, last, fs[0].SessionID, err)
	}
	return nil
}

// packBufs are the writer's buffers for a pack's bytes.
type packBufs struct{ plain, z []byte }

// maxRun is the most ops handleRun takes at once.
const maxRun = 1024

// runLen returns the length of the run of small frames and stream writes
// of sessions that still exist that ops starts with (see frameRun), up to
// maxRun.
func (w *writer) runLen(ops []op) int {
	n := 0
	for n < min(len(ops), maxRun) {
		o := &ops[n]
		if w.deleted[o.sessionID] || o.kind != opFrame && o.kind != opStream ||
			o.kind == opFrame && o.frame.Events == 0 && len(o.frame.Raw)+len(o.frame.Data) > maxChunked {
			break
		}
		n++
	}
	return n
}

// handleRun applies a run of frame and stream ops (see runLen): each
// session's packable frames with consecutive seqs, above any seq it wrote
// before, go in packs; the others in chunks of rows (handleFrames), or one
// by one when their seq may be in a pack already. The streams' rows are
// written last (see putStreams). The run is committed whole: a commit its
// ops ask for waits for its end (see inRun), so that no commit holds a
// frame without its stream's row.
func (w *writer) handleRun(ops []op) {
	if w.d.Err() != nil || !w.ensureTxn() {
		return
	}
	w.inRun, w.runDue = true, false
	defer func() { w.inRun = false }()
	clear(w.packOf)
	w.packOps, w.packSize, w.rest, w.streamOps = w.packOps[:0], w.packSize[:0], w.rest[:0], w.streamOps[:0]
	var check []*op
	for i := range ops {
		o := &ops[i]
		if o.kind == opStream {
			w.streamOps = append(w.streamOps, o)
			continue
		}
		f := o.frame
		hi, own := w.seqs[o.sessionID]
		switch {
		case !own:
			w.rest = append(w.rest, *o)
			continue
		case f.Seq <= hi:
			check = append(check, o)
			continue
		}
		w.seqs[o.sessionID] = lastSeq(f) // the pass's own bound; wrote sets it again
		o.newSeq = true
		j, open := w.packOf[o.sessionID]
		if open {
			p := w.packOps[j]
			if !packable(f) || lastSeq(p[len(p)-1].frame)+1 != f.Seq || len(p) >= maxPackFrames ||
				w.packSize[j]+len(f.Raw)+len(f.Data) > maxPackBytes {
				delete(w.packOf, o.sessionID)
				open = false
			}
		}
		switch {
		case !packable(f):
			w.rest = append(w.rest, *o)
		case open:
			w.packOps[j] = append(w.packOps[j], o)
			w.packSize[j] += len(f.Raw) + len(f.Data)
		default:
			w.packOf[o.sessionID] = len(w.packOps)
			w.packSize = append(w.packSize, len(f.Raw)+len(f.Data))
			if len(w.packOps) < cap(w.packOps) {
				w.packOps = w.packOps[:len(w.packOps)+1]
				w.packOps[len(w.packOps)-1] = append(w.packOps[len(w.packOps)-1][:0], o)
			} else {
				w.packOps = append(w.packOps, []*op{o})
			}
		}
	}
	first := false
	for _, p := range w.packOps {
		if len(p) == 1 && p[0].frame.Events == 0 {
			w.rest = append(w.rest, *p[0])
			continue
		}
		first = w.putPack(p) || first
		if w.d.Err() != nil {
			return
		}
	}
	for _, o := range check {
		w.handle(o)
	}
	for i := 0; i < len(w.rest); {
		if n := w.frameRun(w.rest[i:]); n > 1 {
			w.handleFrames(w.rest[i : i+n])
			i += n
		} else {
			w.handle(&w.rest[i])
			i++
		}
	}
	w.putStreams()
	clear(w.rest) // drop the frames for the collector
	clear(w.streamOps)
	for _, p := range w.packOps {
		clear(p)
	}
	if w.t != nil && (first || w.runDue || w.n >= maxBatchOps || w.size >= maxBatchBytes) {
		w.commit()
	}
}

// putStreams writes the streams' rows of a run, once its frames are
// written. Each write of a stream replaces its whole row, so only the
// last of a stream's writes in the run is applied: a stream that opened
// and ended within the run (most HTTP exchanges) costs one row write,
// not two. If SQLite refuses that write, the one before it is applied
// instead, as it would have been on its own.
func (w *writer) putStreams() {
	if len(w.streamOps) == 0 {
		return
	}
	if w.streamDone == nil {
		w.streamDone = map[int64]bool{}
	}
	clear(w.streamDone)
	for i := len(w.streamOps) - 1; i >= 0; i-- {
		o := w.streamOps[i]
		id, _ := o.args[0].(int64) // the stream's id (see streamArgs)
		if w.streamDone[id] {
			continue
		}
		if w.handle(o) {
			w.streamDone[id] = true
		}
		if w.d.Err() != nil {
			return
		}
	}
}

// putPack writes the frame ops p as one pack, or one by one if SQLite
// refuses the pack (a limit on the length of a value, say), so that only
// a frame refused on its own is dropped. It reports whether one of them
// was its session's first frame, to be committed at once.
func (w *writer) putPack(p []*op) (first bool) {
	if w.t == nil && !w.ensureTxn() {
		return false
	}
	fs := w.packFrames[:0]
	size := 0
	for _, o := range p {
		fs = append(fs, o.frame)
		size += len(o.frame.Raw) + len(o.frame.Data)
	}
	defer func() { clear(fs); w.packFrames = fs[:0] }()
	var err error
	if size <= maxPackBytes {
		err = w.t.putPack(fs, &w.packBuf)
		if cap(w.packBuf.plain)+cap(w.packBuf.z) > 4*maxPackBytes {
			w.packBuf = packBufs{}
		}
	}
	if size > maxPackBytes || err != nil {
		if err != nil && !w.isolable(err) {
			w.abort(err)
			return false
		}
		for _, o := range p {
			w.handle(o)
		}
		return false
	}
	for _, o := range p {
		w.size += o.size()
		first = w.firstFrame(o.sessionID) || first
		w.wrote(o.frame)
	}
	w.n += len(p)
	return first
}

// wrote notes that f is written, for the packs of its session.
func (w *writer) wrote(f *Frame) {
	if hi, own := w.seqs[f.SessionID]; own && lastSeq(f) > hi {
		w.seqs[f.SessionID] = lastSeq(f)
	}
}

// errSeqPacked is the error of a frame whose seq is in a pack already.
// Its text is SQLite's for a seq given twice in rows.
var errSeqPacked = errors.New("UNIQUE constraint failed: frames.session_id, frames.seq (the seq is in a pack)")

// checkPacked returns errSeqPacked if the seq of o's frame, not above the
// highest its session wrote, is in one of the session's packs: a row of
// frames with the same seq would be a second frame there, which the
// unique index on frames, which covers only rows, cannot refuse.
func (w *writer) checkPacked(o *op) error {
	f := o.frame
	if hi, own := w.seqs[f.SessionID]; !own || f.Seq > hi || o.newSeq {
		return nil
	}
	last, err := w.t.queryInt(`SELECT last_seq FROM frame_packs WHERE session_id = ? AND first_seq <= ?
		ORDER BY first_seq DESC LIMIT 1`, f.SessionID, f.Seq)
	switch {
	case errors.Is(err, errNoRows):
	case err != nil:
		return err
	case last >= f.Seq:
		return fmt.Errorf("insert frame %d of session %d: %w", f.Seq, f.SessionID, errSeqPacked)
	}
	return nil
}
