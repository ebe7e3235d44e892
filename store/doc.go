// Package store keeps recordings in a cassette: one SQLite file holding
// sessions, their streams and their frames, byte for byte as they crossed
// the wire.
//
//	session 1 (stdio)           session 2 (http)
//	├── stream 1 stdin          ├── stream 4 post ── frames 1, 2 (request, SSE events)
//	├── stream 2 stdout         ├── stream 5 get  ── frame 3 (notification)
//	└── stream 3 stderr         └── stream 6 resume (of 5, Last-Event-ID)
//	frames 1..n, total order by seq within the session
//
// A DB has one writer goroutine that batches writes into transactions,
// committing at least every 100 ms, and at a stream's end once the writes
// pause (within 50 ms while they do not), so that recording never waits
// for the disk and a crash loses at most 100 ms (WAL and transactions
// keep the file intact). A second goroutine copies the write-ahead log
// into the file (checkpoints), so that the writer does not wait for that
// either. Write calls only queue; the queue is bounded, and a full queue
// blocks callers rather than drop frames. Reads use their own
// connections and run while the writer writes.
//
// With Options.LowPriority the writer works on a thread of the lowest
// CPU priority (nice 19, on Linux), so that forwarding never waits for a
// CPU the writer holds: on a machine with few CPUs the writer's work for
// one request otherwise ran beside the forwarding of the next. While it
// is low it schedules its commits at 50 ms rather than 100, leaving the
// rest for its waits for a CPU. If two commits in a row still came later
// than 100 ms after their oldest write, a write had to wait for room in
// the queue, or it finds another process's writer holding the file's
// lock, it moves to a thread of normal priority, and goes back down
// after a calm spell (see priority.go). It is off by default: on a
// heavily loaded machine a low writer's commits still came late before
// it came up, and a kill -9 then lost up to 892 ms.
//
// The schema lives in schema.sql as numbered migrations, tracked with
// PRAGMA user_version; a cassette is marked with PRAGMA application_id.
// The writer stores a run of a session's server frames with consecutive
// seqs as one row of frame_packs rather than a row of frames each (see
// pack.go); every read merges the two by seq, so readers never see it.
// An HTTP recorder may hand Append the SSE events one read of a busy
// stream completes as one frame (Frame.Events), which a pack keeps as it
// came and every read splits into its events' frames (see eventrun.go).
// The JSONL text form (Export, Import) is what the repository commits:
// deterministic, one record per line, lossless; CountSessions and
// FrameLines read its records without importing them.
//
// A cassette also holds a cache (cache.go): byte values under byte keys
// in named tables, which readers derive from the sessions and keep so as
// not to derive them again (CacheGet, CacheRange, CachePut). Replay keeps
// its index of the sessions there, in an encoding of its own
// (internal/replayindex); an entry derived from one session is deleted
// with it, and nothing else of store reads a cache.
//
// Session labels mcpvcr reads and writes are all defined in labels.go
// (LabelRedactJSON, LabelNoise, …). Kind and Message are aliases of the
// JSON-RPC parser's own types: Frame.DeriveMessage returns the parsed view
// a frame's derived fields come from. Stream.SSE is the one rule for
// whether a stream was answered with an event stream.
//
// Reading: a Recording is one session as plain data (its Session,
// Streams and Frames), read with DB.Recording or DB.Recordings, or with
// LoadFile from a path, which needs no Close afterwards. Replay, diff and
// verify take Recordings and never change them.
//
// Files: Sniff tells a cassette from a JSONL export; OpenFile opens
// either (an export is imported into a temporary cassette that Close
// removes, see DB.Temporary; a cassette that cannot be written is opened
// read-only, see DB.ReadOnly); CheckFile checks either, from SQLite's
// integrity check to each frame's bytes against its indexed fields. New
// cassettes are created 0600.
//
// # Lifecycle
//
// Open or OpenFile return a DB that the caller must Close: Close commits
// what was queued and reports a writer failure that happened at any time.
// A DB is safe for concurrent use.
//
// # Walkthrough
//
//	db, err := store.Open(ctx, "bug.db") // created if missing
//	if err != nil { ... }
//	defer db.Close()
//	ids, err := db.Import(ctx, f) // a JSONL export
//	rec, err := db.Recording(ctx, ids[0])
//	for _, f := range rec.Frames { fmt.Println(f.Seq, f.Direction, f.Kind, f.Method) }
//
// The store uses github.com/mattn/go-sqlite3, which needs cgo and a C
// compiler.
package store
