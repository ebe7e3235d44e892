package store_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/binary"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/s2"

	"github.com/mcpvcr/mcpvcr/store"
)

// bombCassette records a sample and adds, behind the store's back, n
// compressed packs of 27 bytes to session 1 that each decode to 7 MiB of
// 599,186 empty frames: the decompression bomb of issue #48 (a 278 KB
// cassette of ten of them took show, export and replay past 4 GB).
func bombCassette(t *testing.T, n int) (path string, sessionID int64, frames int) {
	t.Helper()
	const count = 599186
	path = filepath.Join(t.TempDir(), "bomb.db")
	d := openPath(t, path)
	smp := recordSample(t, d)
	must(t, d.Close())
	sessionID = smp.sessions[0].ID
	frame := []byte{0, 0, byte(store.ServerToClient), 0, byte(store.KindNotification), 0, 0, 0, 0, 0, 0, 0}
	body := bytes.Repeat(frame, count)
	pack := append(binary.AppendUvarint([]byte{2}, uint64(len(body))), s2.Encode(nil, body)...)
	if len(pack) > 32 {
		t.Fatalf("the bomb is %d bytes", len(pack))
	}
	db, err := sql.Open("sqlite3", path)
	must(t, err)
	defer db.Close()
	next := int64(len(smp.frames[sessionID])) + 1
	for range n {
		_, err := db.Exec("INSERT INTO frame_packs (session_id, first_seq, last_seq, frames) VALUES (?, ?, ?, ?)", sessionID, next, next+count-1, pack)
		must(t, err)
		next += count
	}
	return path, sessionID, len(smp.frames[sessionID])
}

// TestPackBomb: every read of a cassette with decompression bombs refuses
// them at once, naming each pack, in memory that does not grow with what
// they claim; a rescue exports every other frame.
func TestPackBomb(t *testing.T) {
	ctx := context.Background()
	path, sid, recorded := bombCassette(t, 10)
	const want = "frames 10 to 599195: damaged pack: a pack claims 599186 frames"

	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	start := time.Now()

	d := openPath(t, path)
	if _, err := d.Frames(ctx, sid); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Frames() = %v; want an error naming %q", err, want)
	}
	var out bytes.Buffer
	if err := d.Export(ctx, &out, sid); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Export() = %v; want an error naming %q", err, want)
	}
	out.Reset()
	skipped, err := d.Rescue(ctx, &out)
	must(t, err)
	if len(skipped) != 10 || !strings.Contains(skipped[0], want) {
		t.Errorf("Rescue() passed over %q; want the 10 packs, the first naming %q", skipped, want)
	}
	must(t, d.Close())
	r, err := store.CheckFile(ctx, path)
	must(t, err)
	if !r.Failed(store.CheckOrder) || !strings.Contains(strings.Join(r.Checks[2].Problems, "\n"), want) {
		var b strings.Builder
		r.WriteText(&b)
		t.Errorf("CheckFile does not name the bombs:\n%s", b.String())
	}

	runtime.ReadMemStats(&m1)
	if got := m1.TotalAlloc - m0.TotalAlloc; got > 64<<20 {
		t.Errorf("reading the cassette allocated %d MiB", got>>20)
	}
	if el := time.Since(start); el > 10*time.Second {
		t.Errorf("reading the cassette took %v", el)
	}

	// What the rescue wrote imports back with every recorded frame.
	nd := openDB(t)
	ids, err := nd.Import(ctx, &out)
	must(t, err)
	fs, err := nd.Frames(ctx, ids[0])
	must(t, err)
	if len(fs) != recorded {
		t.Errorf("the rescue holds %d frames of session %d; want the %d recorded", len(fs), sid, recorded)
	}
}
