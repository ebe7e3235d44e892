package store

// Big frames are written into their row in pieces (issues #46 and #48).
//
// A value bound to a statement is copied by go-sqlite3 into memory of
// the statement's (which it keeps for the statement's life), and SQLite
// copies it once more into the record it inserts: a frame of 64 MB cost
// the writer 128 MB of C memory beside the frame itself. A frame whose
// raw bytes are longer than bigRaw is inserted with zeroblob(n) in their
// place, which SQLite writes through its page cache without a buffer of
// n bytes, and its bytes are then written into the row with SQLite's
// incremental blob I/O, a piece at a time, straight from the frame.
//
// go-sqlite3 compiles SQLite into the program but has no binding for
// blob I/O: the few functions are declared here, and the connection's
// handle is read from go-sqlite3's SQLiteConn.

/*
#include <stdlib.h>
typedef struct sqlite3 sqlite3;
typedef struct sqlite3_blob sqlite3_blob;
int sqlite3_blob_open(sqlite3*, const char*, const char*, const char*, long long, int, sqlite3_blob**);
int sqlite3_blob_write(sqlite3_blob*, const void*, int, int);
int sqlite3_blob_read(sqlite3_blob*, void*, int, int);
int sqlite3_blob_bytes(sqlite3_blob*);
int sqlite3_blob_close(sqlite3_blob*);
long long sqlite3_last_insert_rowid(sqlite3*);
const char *sqlite3_errmsg(sqlite3*);
const char *sqlite3_errstr(int);

static int mcpvcr_blob_write(sqlite3 *db, long long rowid, const char *col, const void *p, int n, int piece) {
	sqlite3_blob *b = 0;
	int rc = sqlite3_blob_open(db, "main", "frames", col, rowid, 1, &b);
	if (rc != 0) {
		if (b) sqlite3_blob_close(b);
		return rc;
	}
	for (int off = 0; off < n && rc == 0; off += piece) {
		int k = n - off < piece ? n - off : piece;
		rc = sqlite3_blob_write(b, (const char*)p + off, k, off);
	}
	int crc = sqlite3_blob_close(b);
	return rc != 0 ? rc : crc;
}

static int mcpvcr_blob_read(sqlite3 *db, long long rowid, const char *col, void *p, int n, int piece) {
	sqlite3_blob *b = 0;
	int rc = sqlite3_blob_open(db, "main", "frames", col, rowid, 0, &b);
	if (rc != 0) {
		if (b) sqlite3_blob_close(b);
		return rc;
	}
	if (sqlite3_blob_bytes(b) != n) {
		sqlite3_blob_close(b);
		return 1; // SQLITE_ERROR: not the value the row was read with
	}
	for (int off = 0; off < n && rc == 0; off += piece) {
		int k = n - off < piece ? n - off : piece;
		rc = sqlite3_blob_read(b, (char*)p + off, k, off);
	}
	int crc = sqlite3_blob_close(b);
	return rc != 0 ? rc : crc;
}
*/
import "C"

import (
	"fmt"
	"math"
	"reflect"
	"unsafe"

	"github.com/mattn/go-sqlite3"
)

// bigRaw is the length of raw bytes above which a frame's are written
// into its row in pieces (see above).
const bigRaw = 1 << 20

// blobPiece is the most bytes one write into a row copies.
const blobPiece = 256 << 10

// insertBigFrameSQL is insertFrameSQL with zeroblob(n) for raw.
const insertBigFrameSQL = `INSERT INTO frames (session_id, seq, stream_id, direction, offset_ns, kind, rpc_id,
		method, batch, malformed, sse, sse_id, sse_has_id, sse_event, sse_retry, comment, raw, data, oversize)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, zeroblob(?), ?, ?)`

// sqliteHandle returns the sqlite3 handle of go-sqlite3's connection c,
// or nil if c is not one (or go-sqlite3 keeps its handle elsewhere).
func sqliteHandle(c any) unsafe.Pointer {
	sc, ok := c.(*sqlite3.SQLiteConn)
	if !ok || sc == nil {
		return nil
	}
	f := reflect.ValueOf(sc).Elem().FieldByName("db")
	if !f.IsValid() || f.Kind() != reflect.Pointer {
		return nil
	}
	return f.UnsafePointer()
}

// writeRaw writes raw into the raw column of the frame row rowid, which
// holds as many zero bytes, a piece at a time.
func writeRaw(db unsafe.Pointer, rowid int64, raw []byte) error {
	if len(raw) == 0 {
		return nil
	}
	col := C.CString("raw")
	defer C.free(unsafe.Pointer(col))
	rc := C.mcpvcr_blob_write((*C.sqlite3)(db), C.longlong(rowid), col, unsafe.Pointer(&raw[0]), C.int(len(raw)), C.int(blobPiece))
	if rc != 0 {
		// As go-sqlite3 reports it, so that isolable and isBusy know it.
		return fmt.Errorf("write %d bytes into frame row %d: %w", len(raw), rowid,
			sqlite3.Error{Code: sqlite3.ErrNo(rc & 0xff), ExtendedCode: sqlite3.ErrNoExtended(rc)})
	}
	return nil
}

// readRaw returns the n bytes of the raw column of frame row rowid, read
// a piece at a time straight into the bytes returned. Read whole, a
// value is copied twice on its way out: into memory of SQLite's, then by
// go-sqlite3 out of it.
func readRaw(db unsafe.Pointer, rowid, n int64) ([]byte, error) {
	if n > math.MaxInt32 {
		return nil, fmt.Errorf("frame row %d holds %d bytes of raw, more than SQLite stores", rowid, n)
	}
	b := make([]byte, n)
	if n == 0 {
		return b, nil
	}
	col := C.CString("raw")
	defer C.free(unsafe.Pointer(col))
	rc := C.mcpvcr_blob_read((*C.sqlite3)(db), C.longlong(rowid), col, unsafe.Pointer(&b[0]), C.int(n), C.int(blobPiece))
	if rc != 0 {
		return nil, fmt.Errorf("read %d bytes of frame row %d: %w", n, rowid,
			sqlite3.Error{Code: sqlite3.ErrNo(rc & 0xff), ExtendedCode: sqlite3.ErrNoExtended(rc)})
	}
	return b, nil
}

// lastRowID returns the rowid of the last row db inserted.
func lastRowID(db unsafe.Pointer) int64 {
	return int64(C.sqlite3_last_insert_rowid((*C.sqlite3)(db)))
}
