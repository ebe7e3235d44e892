package store

// Chunks of rows: the writer inserts runs of small frames that go in no
// pack (client frames, mostly) several to a statement.

// maxChunked is the size above which a frame is inserted on its own: the
// driver copies all the bytes of a statement at once, and per-statement
// costs matter only for small frames.
const maxChunked = 16 << 10

// frameRun returns the size of the chunk of small frames of sessions that
// still exist that ops starts with: the largest of chunkSizes that fits
// the run, or 1 when none does.
func (w *writer) frameRun(ops []op) int {
	n := 0
	for n < min(len(ops), frameChunk) {
		o := &ops[n]
		if o.kind != opFrame || o.frame.Events > 0 || len(o.frame.Raw)+len(o.frame.Data) > maxChunked || w.deleted[o.sessionID] {
			break
		}
		n++
	}
	for _, c := range chunkSizes {
		if n >= c {
			return c
		}
	}
	return 1
}

// handleFrames applies a chunk of frame ops (see frameRun) with one
// statement.
func (w *writer) handleFrames(ops []op) {
	if err := w.d.Err(); err != nil {
		return
	}
	if !w.ensureTxn() {
		return
	}
	var buf [frameChunk]*Frame
	fs := buf[:len(ops)]
	for i := range ops {
		fs[i] = ops[i].frame
	}
	if err := w.t.putFrames(fs); err != nil {
		if !w.isolable(err) {
			w.abort(err)
			return
		}
		// One of the frames is refused (SQLite undid the statement and
		// nothing else): insert them one by one, to keep the others.
		for i := range ops {
			w.handle(&ops[i])
		}
		return
	}
	first := false
	for i := range ops {
		w.size += ops[i].size()
		first = w.firstFrame(ops[i].sessionID) || first
		w.wrote(ops[i].frame)
	}
	w.n += len(ops)
	if first || w.n >= maxBatchOps || w.size >= maxBatchBytes {
		w.commitSoon()
	}
}
