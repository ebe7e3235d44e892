package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Errors returned by the store. Test for them with errors.Is.
var (
	// ErrNotCassette means a file is neither a cassette nor empty: a text
	// file, say, or a SQLite database of another application.
	ErrNotCassette = errors.New("not an mcpvcr cassette")
	// ErrNewerSchema means a cassette was written by a newer mcpvcr, whose
	// schema this build does not know.
	ErrNewerSchema = errors.New("cassette needs a newer mcpvcr")
	// ErrNotExport means a text file is not an mcpvcr JSONL export.
	ErrNotExport = errors.New("not an mcpvcr JSONL export")
	// ErrNotFound means a session or stream does not exist.
	ErrNotFound = errors.New("not found")
	// ErrInvalid means a write was refused because a field is missing or
	// wrong: an unknown enum, a seq below 1, a stream of another session.
	ErrInvalid = errors.New("invalid")
	// ErrClosed means the DB was used after Close.
	ErrClosed = errors.New("cassette closed")
	// ErrEmpty means a cassette to read is an empty file: nothing was
	// recorded into it.
	ErrEmpty = errors.New("empty file")
	// ErrDamaged means SQLite found the header or the pages of a file
	// that starts like a cassette damaged (SQLITE_NOTADB, SQLITE_CORRUPT);
	// CheckFile says what can still be read.
	ErrDamaged = errors.New("the file is damaged")
	// ErrReadOnly is what a write to a DB opened read-only returns (see
	// DB.ReadOnly).
	ErrReadOnly = errors.New("cassette opened read-only")
)

// Tuning of the writer goroutine.
const (
	// commitInterval is the longest an accepted write waits before it is
	// committed, and so the most that a crash can lose.
	commitInterval = 100 * time.Millisecond
	// commitGap is the least time between two commits of a writer that
	// shares the file, which commits whenever it runs out of writes (see
	// writer.commitShared).
	commitGap = 10 * time.Millisecond
	// pollInterval is how often a busy writer takes the writes queued
	// meanwhile (see writer.loop). Every 2 ms, as before, the writer's
	// work came between the hops of most requests at c=1; every 10 ms it
	// meets few (docs/performance.md, third round: the first SSE event
	// 120 µs sooner in five of five alternating runs).
	pollInterval = 10 * time.Millisecond
	// A transaction is committed early once it holds this many writes or
	// bytes of frames.
	maxBatchOps   = 20000
	maxBatchBytes = 16 << 20
)

// Variables, so that tests can stretch them.
var (
	// endGap is the least time between two commits asked for by writes
	// (a stream's or a session's end) while writes keep coming. A write
	// that asks sooner is committed when the gap has passed, together
	// with whatever else ends meanwhile, or once a poll finds no more
	// writes, whichever comes first. A commit writes whole pages to the
	// log, the last pages of the tables again each time: one per stream
	// end would cost more than the frames themselves when streams are
	// short (one per POST), and at a thousand POSTs a second one every
	// 10 ms still cost about 10 µs of CPU per POST (BenchmarkExchanges;
	// docs/performance.md, fifth round). So an ended stream is on disk
	// within pollInterval once the traffic pauses, within endGap while
	// it does not, and any write within commitInterval.
	endGap = 50 * time.Millisecond
	// commitWait is how long a transaction stays open, at most, after
	// the writer began it: the commit interval, less the poll its oldest
	// write may have waited already.
	commitWait = commitInterval - pollInterval
)

// Connection settings. The writer has one connection, so that writes are
// totally ordered; readers share a pool of read-only connections, which
// WAL lets run while the writer writes.
//
// The writer has SQLite enforce the schema's foreign keys only in
// exclusive transactions that delete nothing (imports): for recorded
// writes the DB checks, before it queues a write, that the session and
// stream it names exist (checkSession, checkStream, checkResumes), and
// DeleteSession deletes children before parents itself. Enforcing them
// looked up a frame's session and stream in every insert, 8% of its CPU
// time (go test -bench Append ./store); Check still reports any orphan.
const (
	writerParams       = "_fk=0&_busy_timeout=0&_txlock=immediate&_sync=NORMAL&_cache_size=-2048&_mutex=no"
	readerParams       = "_fk=1&_busy_timeout=10000&_query_only=1"
	checkpointerParams = "_busy_timeout=1000"
	maxReaders         = 4
)

// DB is a cassette: a SQLite file holding recorded sessions, their streams
// and their frames. It is safe for concurrent use.
//
// Writes (CreateSession, UpdateSession, OpenStream, CloseStream, Append)
// are validated and assigned their IDs at once, then queued for a single
// writer goroutine that commits them in batches: at least every 100 ms,
// and at once at every CloseStream, at every UpdateSession that ends a
// session, and at Flush and Close. Reads see a write once it is committed;
// call Flush to wait for that. A crash loses at most the writes of the
// last commit interval and never corrupts the file.
//
// If the writer fails (the disk is full, say), the error is sticky: Err
// reports it, every later write returns it, and what was committed before
// stays readable.
//
// Any number of DBs, in any number of processes, may write to one file
// at once: each takes session and stream IDs from the file (see ids.go).
// A session's frames must all be appended through one DB, which the
// caller numbers (Frame.Seq).
type DB struct {
	path       string    // as given, for messages
	wdb        *sql.DB   // the writer's single connection
	wconn      *sql.Conn // that connection, held by the writer
	rdb        *sql.DB   // read-only connections
	cdb        *sql.DB   // the checkpointer's connection
	ckpt       *checkpointer
	pageSize   int            // the file's, in bytes
	q          *queue         // writes for the writer goroutine
	wg         sync.WaitGroup // waits for the writer and checkpointer goroutines
	removeDir  string         // a temporary directory that Close removes
	held       *heldFile      // the file's descriptor, held until Close (see heldfile.go)
	readOnly   error          // why the DB was opened read-only (see ReadOnly); nil when writable
	noPacks    bool           // the file's schema is older than frame_packs (read-only, see openReader)
	noOversize bool           // the file's schema is older than frame_oversize (read-only)
	noCache    bool           // the file's schema is older than the cache table (read-only, see openReader)

	lowWriter bool         // Options.LowPriority
	writerTID atomic.Int32 // the writer's thread while it is lowered, 0 otherwise

	// w is the writer's state, which only the writer goroutine touches
	// (an exclusive op's fn runs there). Nil if read-only.
	w *writer

	failed atomic.Pointer[failure] // the sticky writer error, once set
	log    *slog.Logger

	// mu guards the ID pools and the sessions and streams known to exist.
	mu         sync.Mutex
	sessionIDs *idPool
	streamIDs  *idPool
	sessions   knownCache[bool]  // session id → exists (false: deleted); see known.go
	streams    knownCache[int64] // stream id → its session id (0: deleted)
}

type failure struct{ err error }

// Open opens the cassette at path, creating it if the file does not
// exist or is empty, and migrates it to this build's schema. It fails
// with ErrNotCassette if the file is something else, with ErrDamaged if
// SQLite finds it damaged, and with ErrNewerSchema if a newer mcpvcr
// wrote it. The caller must call Close.
func Open(ctx context.Context, path string) (*DB, error) {
	return OpenWith(ctx, path, Options{})
}

// Options tune a DB opened with OpenWith. The zero value is Open's.
type Options struct {
	// Logger receives the writes the writer could not store and went on
	// without: a frame SQLite refuses (longer than its limit, say) is
	// dropped alone, every other frame and session is still stored. If
	// nil, nothing is logged.
	Logger *slog.Logger
	// ReserveIDs reserves a block of session and stream IDs at once, in
	// the background, so that the first session a recorder creates does
	// not wait for the file's write lock (which another recorder may
	// hold) while its client waits for an answer. What is not used is
	// given back at Close.
	ReserveIDs bool
	// LowPriority runs the writer on a thread of the lowest priority
	// while that does no harm, so that forwarding never waits for a CPU
	// it holds (see the package doc). Off by default: under heavy load a
	// kill -9 can then lose more than the commit interval.
	LowPriority bool
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, path string, o Options) (*DB, error) {
	d, err := open(ctx, path, o)
	if err != nil {
		return nil, fmt.Errorf("open cassette %s: %w", path, sqliteError(err))
	}
	return d, nil
}

func open(ctx context.Context, path string, o Options) (_ *DB, err error) {
	if path == "" {
		return nil, errors.New("no path given")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	if _, err := probeFile(abs); err != nil {
		return nil, err
	}
	h, err := holdFile(abs, true)
	if err != nil {
		return nil, err
	}
	d := &DB{
		held:       h,
		path:       path,
		q:          newQueue(),
		sessionIDs: newIDPool("sessions", sessionBlock),
		streamIDs:  newIDPool("streams", streamBlock),
		sessions:   newKnownCache[bool](),
		streams:    newKnownCache[int64](),
		log:        o.Logger,

		lowWriter: o.LowPriority,
	}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	defer func() {
		if err != nil {
			if d.ckpt != nil {
				d.ckpt.cancel()
			}
			d.closeConns()
			d.held.release()
		}
	}()
	if d.wdb, err = sql.Open(driverName, dsn(abs, writerParams)); err != nil {
		return nil, err
	}
	d.wdb.SetMaxOpenConns(1)
	d.wdb.SetMaxIdleConns(1)
	d.wdb.SetConnMaxLifetime(0)
	d.wdb.SetConnMaxIdleTime(0)
	var version int
	err = retryBusy(func() (err error) {
		version, err = inspect(ctx, d.wdb)
		return err
	})
	if err != nil {
		return nil, sqliteError(err)
	}
	if version == 0 {
		// Big pages: fewer pages per frame, so fewer write calls, which
		// are what ingest spends most on. It must be set before the first
		// table is created.
		if _, err := d.wdb.ExecContext(ctx, "PRAGMA page_size = 16384"); err != nil {
			return nil, err
		}
	}
	// Only now that the file is known to be a cassette (or empty) may it
	// be changed: journal_mode=WAL is stored in the file.
	var mode string
	err = retryBusy(func() error {
		return d.wdb.QueryRowContext(ctx, "PRAGMA journal_mode = WAL").Scan(&mode)
	})
	if err != nil {
		return nil, fmt.Errorf("enable WAL: %w", err)
	}
	if mode != "wal" {
		return nil, fmt.Errorf("enable WAL: journal mode is %q", mode)
	}
	// A statement that writes several rows (an INSERT of a run of frames)
	// keeps the pages it changes that the transaction had changed
	// before, so that it can be undone alone: its statement journal. In
	// a temporary file that is two writes per page (its number, then its
	// 16 KB) per statement; in memory it is a copy.
	if _, err := d.wdb.ExecContext(ctx, "PRAGMA temp_store = MEMORY"); err != nil {
		return nil, err
	}
	if _, err := d.wdb.ExecContext(ctx, "PRAGMA wal_autocheckpoint = 0"); err != nil {
		return nil, err // the checkpointer does it
	}
	if _, err := d.wdb.ExecContext(ctx, "PRAGMA journal_size_limit = 67108864"); err != nil {
		return nil, err
	}
	if err := migrate(ctx, d.wdb, version); err != nil {
		return nil, err
	}
	if err := d.wdb.QueryRowContext(ctx, "PRAGMA page_size").Scan(&d.pageSize); err != nil {
		return nil, err
	}
	if d.rdb, err = sql.Open(driverName, dsn(abs, readerParams)); err != nil {
		return nil, err
	}
	d.rdb.SetMaxOpenConns(maxReaders)
	d.rdb.SetMaxIdleConns(maxReaders)
	if err := d.rdb.PingContext(ctx); err != nil {
		return nil, err
	}
	if d.cdb, err = sql.Open(driverName, dsn(abs, checkpointerParams)); err != nil {
		return nil, err
	}
	d.cdb.SetMaxOpenConns(1)
	d.ckpt = newCheckpointer(d.cdb)
	if d.wconn, err = d.wdb.Conn(ctx); err != nil {
		return nil, err
	}
	w := &writer{d: d, deleted: make(map[int64]bool), fresh: make(map[int64]bool), seqs: make(map[int64]int64), packOf: make(map[int64]int)}
	d.w = w
	started := make(chan error, 1)
	d.wg.Add(1)
	go w.run(d.wconn, started)
	if err := <-started; err != nil {
		d.q.close()
		d.wg.Wait()
		return nil, err
	}
	d.wg.Add(1)
	go func() {
		defer d.wg.Done()
		d.ckpt.run()
	}()
	if o.ReserveIDs {
		d.mu.Lock()
		d.sessionIDs.asking = true // the writer tops up the streams' IDs with it
		d.mu.Unlock()
		if err := d.send(ctx, op{kind: opReserve, pool: d.sessionIDs}); err != nil {
			d.wakeIDWaiters(d.sessionIDs)
		}
	}
	return d, nil
}

// dsn builds a go-sqlite3 data source name for the file at abs. The path
// goes in a file: URI so that characters such as '?' and '#' in it are
// escaped rather than read as parameters.
func dsn(abs, params string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(abs), RawQuery: params}
	if u.Path != "" && u.Path[0] != '/' {
		u.Path = "/" + u.Path // Windows drive letters
	}
	return u.String()
}

// sqliteError turns SQLite's "file is not a database" and "database disk
// image is malformed" into ErrDamaged: the file starts with the SQLite
// header (probeFile and Sniff saw to that), so its header or pages are
// broken.
func sqliteError(err error) error {
	var se sqlite3.Error
	switch {
	case errors.Is(err, ErrNotCassette), errors.Is(err, ErrDamaged), !errors.As(err, &se):
		return err
	case se.Code == sqlite3.ErrNotADB, se.Code == sqlite3.ErrCorrupt:
		return fmt.Errorf("%w (%w)", ErrDamaged, err)
	}
	return err
}

// Close commits every write accepted so far, stops the writer and closes
// the file. It returns the writer's error if the writer failed at any
// time, so that a recording that lost frames does not end silently.
// Calling Close more than once is harmless.
func (d *DB) Close() error {
	if !d.q.close() {
		return nil
	}
	if d.ckpt != nil {
		d.ckpt.stop()
	}
	d.wg.Wait()

	err := d.Err()
	if cerr := d.closeConns(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close cassette %s: %w", d.path, cerr))
	}
	d.held.release() // only now that SQLite holds no lock on the file
	if d.removeDir != "" {
		if rerr := os.RemoveAll(d.removeDir); rerr != nil {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// closeConns closes the connections, readers first, so that the writer's
// connection is the last and checkpoints the WAL into the file.
func (d *DB) closeConns() error {
	var errs []error
	for _, db := range []*sql.DB{d.rdb, d.cdb} {
		if db != nil {
			errs = append(errs, db.Close())
		}
	}
	if d.wconn != nil {
		errs = append(errs, d.wconn.Close())
	}
	if d.wdb != nil {
		errs = append(errs, d.wdb.Close())
	}
	return errors.Join(errs...)
}

// Err returns the error that stopped the writer, or nil while it works.
// Once set, it stays. Everything committed before it stays readable.
func (d *DB) Err() error {
	if f := d.failed.Load(); f != nil {
		return f.err
	}
	return nil
}

// fail makes err the sticky writer error, unless one is already set.
func (d *DB) fail(err error) {
	d.failed.CompareAndSwap(nil, &failure{fmt.Errorf("write %s: %w", d.path, err)})
}

// Flush waits until every write accepted before the call is committed. It
// returns the writer's error if the writer failed.
func (d *DB) Flush(ctx context.Context) error {
	done := make(chan error, 1)
	if err := d.send(ctx, op{kind: opFlush, commit: true, done: done}); err != nil {
		return fmt.Errorf("flush: %w", err)
	}
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("flush: %w", err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("flush: %w", ctx.Err())
	}
}

// send queues o for the writer, blocking while the queue is full.
func (d *DB) send(ctx context.Context, o op) error {
	if d.readOnly != nil {
		return ErrReadOnly
	}
	if err := d.Err(); err != nil {
		return err
	}
	return d.q.put(ctx, o)
}

// exclusive runs o.fn in the writer goroutine, in a transaction of its
// own, after everything queued before it is committed, and waits for it.
// The writer waits for fn, so fn must honour ctx itself.
func (d *DB) exclusive(ctx context.Context, o op) error {
	o.kind, o.done = opExclusive, make(chan error, 1)
	if err := d.send(ctx, o); err != nil {
		return err
	}
	return <-o.done
}

// Probe checks, without taking any lock, what Open would check first:
// that path can be opened for writing (it is created if missing) and is
// empty or a SQLite file whose header names no other application and no
// newer schema. A recorder probes, then opens in the background and
// forwards meanwhile: Open may wait for other processes that write to the
// same file. The header Probe reads may lag behind a file whose log is
// not yet copied into it; Open has the last word. Probe also refuses a
// cassette whose schema holds objects mcpvcr never creates
// (ErrForeignSchema). Call it before this
// process opens path: closing a file releases the process's SQLite locks
// on it.
func Probe(path string) error {
	if err := probe(path); err != nil {
		return fmt.Errorf("open cassette %s: %w", path, err)
	}
	return nil
}

func probe(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return err
	}
	empty, err := probeFile(abs)
	if err != nil || empty {
		return err
	}
	head, err := readHead(abs, 100)
	if err != nil {
		return err
	}
	if len(head) < 100 {
		return nil // a header being written: Open will tell
	}
	version := binary.BigEndian.Uint32(head[60:])
	switch appID := binary.BigEndian.Uint32(head[68:]); {
	case appID == applicationID && int(version) > schemaVersion:
		return fmt.Errorf("schema version %d, but this build knows up to %d: %w", version, schemaVersion, ErrNewerSchema)
	case appID != applicationID && appID != 0:
		return fmt.Errorf("%w (a SQLite database of another program)", ErrNotCassette)
	}
	return probeSchema(abs)
}

// probeSchema refuses a cassette whose schema holds objects mcpvcr never
// creates (ErrForeignSchema), so that a recorder does not start its
// server for a file Open will refuse. It reads the schema through a
// read-only connection; any other failure is left for Open to tell.
func probeSchema(abs string) error {
	db, err := sql.Open(driverName, dsn(abs, "_busy_timeout=1000&mode=ro"))
	if err != nil {
		return nil
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := inspect(ctx, db); errors.Is(err, ErrForeignSchema) {
		return err
	}
	return nil
}

// packs reports whether the file has the frame_packs table (see pack.go).
func (d *DB) packs() bool { return !d.noPacks }
