package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// niceOf reads the nice value of a thread from its stat file in /proc.
func niceOf(stat string) (int, error) {
	b, err := os.ReadFile(stat)
	if err != nil {
		return 0, err
	}
	// The fields after the command, which is in parentheses and may hold
	// spaces: state is the 3rd field, nice the 19th.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 19-2 {
		return 0, fmt.Errorf("%s: %q has too few fields", stat, b)
	}
	return strconv.Atoi(f[19-3])
}

// threadNice is the nice value of thread tid of this process.
func threadNice(t *testing.T, tid int32) int {
	t.Helper()
	n, err := niceOf(fmt.Sprintf("/proc/self/task/%d/stat", tid))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// move is a writer's move to a thread of the other priority, with the
// nice value of the thread it moved to.
type move struct {
	low  bool
	nice int
	err  error
}

// hops makes the writers report their moves on the channel it returns,
// until the test ends. The knobs tests turn are restored then too. It
// skips the test where threads have no priority of their own.
func hops(t *testing.T) <-chan move {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("threads have a priority of their own on Linux only")
	}
	ch := make(chan move, 1024)
	limit, first := lateLimit, calmFirst
	onHop = func(_ *DB, low bool) {
		n, err := niceOf("/proc/thread-self/stat")
		select {
		case ch <- move{low, n, err}:
		default:
		}
	}
	t.Cleanup(func() { onHop, lateLimit, calmFirst = nil, limit, first })
	return ch
}

func openInternal(t *testing.T, o Options) *DB {
	t.Helper()
	d, err := OpenWith(context.Background(), filepath.Join(t.TempDir(), "c.db"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close() = %v", err)
		}
	})
	return d
}

// appendFrames records a stdio session of n frames and waits until they
// are committed.
func appendFrames(t *testing.T, d *DB, n int) *Session {
	t.Helper()
	s, err := recordPings(d, n)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func recordPings(d *DB, n int) (*Session, error) {
	ctx := context.Background()
	s := &Session{Transport: Stdio, StartedAt: time.Now(), ExitCode: -1}
	if err := d.CreateSession(ctx, s); err != nil {
		return nil, err
	}
	for i := 1; i <= n; i++ {
		f := &Frame{SessionID: s.ID, Seq: int64(i), Direction: ClientToServer, Raw: []byte(`{"jsonrpc":"2.0","method":"ping","id":` + strconv.Itoa(i) + "}\n")}
		if err := d.Append(ctx, f); err != nil {
			return nil, err
		}
	}
	return s, d.Flush(ctx)
}

func wantFrames(t *testing.T, d *DB, s *Session, n int) {
	t.Helper()
	fs, err := d.Frames(context.Background(), s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != n {
		t.Fatalf("%d frames stored, want %d", len(fs), n)
	}
}

func TestWriter_LowPriority(t *testing.T) {
	hops(t)
	lateLimit = time.Hour // a busy machine must not bring it up
	d := openInternal(t, Options{LowPriority: true})
	s := appendFrames(t, d, 10)
	wantFrames(t, d, s, 10)
	tid := d.writerTID.Load()
	if tid == 0 {
		t.Fatal("the writer did not lower its thread")
	}
	if got := threadNice(t, tid); got != 19 {
		t.Errorf("the writer's thread %d has nice %d, want 19", tid, got)
	}
	if got := threadNice(t, int32(os.Getpid())); got != 0 {
		t.Errorf("the main thread has nice %d, want 0: the writer lowered more than its own thread", got)
	}

	n := openInternal(t, Options{})
	wantFrames(t, n, appendFrames(t, n, 10), 10)
	if tid := n.writerTID.Load(); tid != 0 {
		t.Errorf("without LowPriority the writer lowered thread %d", tid)
	}
}

// A low writer whose commits come late comes up, and goes back down
// after its calm time.
func TestWriter_UpAndDown(t *testing.T) {
	moves := hops(t)
	lateLimit, calmFirst = -1, 0 // every commit is late; no calm needed
	d := openInternal(t, Options{LowPriority: true})
	var want []bool // up, then down
	for i := 0; len(want) < 2; i++ {
		if i == 1000 {
			t.Fatalf("after %d flushes the writer moved %v; want up and down", i, want)
		}
		appendFrames(t, d, 5)
		for len(want) < 2 {
			var m move
			got := false
			select {
			case m = <-moves:
				got = true
			default:
			}
			if !got {
				break
			}
			if m.err != nil {
				t.Fatal(m.err)
			}
			if m.low != (len(want) == 1) {
				t.Fatalf("move %d went low=%v", len(want)+1, m.low)
			}
			if wantNice := map[bool]int{false: 0, true: 19}[m.low]; m.nice != wantNice {
				t.Errorf("move %d (low=%v) to a thread of nice %d, want %d", len(want)+1, m.low, m.nice, wantNice)
			}
			want = append(want, m.low)
		}
	}
}

// A low writer that finds another writer holding the file's lock comes
// up, and stays up.
func TestWriter_ComesUpWhenShared(t *testing.T) {
	moves := hops(t)
	lateLimit = time.Hour
	path := filepath.Join(t.TempDir(), "c.db")
	d, err := OpenWith(context.Background(), path, Options{LowPriority: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	other, err := sql.Open("sqlite3", dsn(path, "_txlock=immediate"))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := other.Begin() // takes the write lock
	if err != nil {
		t.Fatal(err)
	}
	busy := make(chan struct{})
	var once sync.Once
	onBusy = func() { once.Do(func() { close(busy) }) }
	defer func() { onBusy = nil }()
	var s *Session
	flushed := make(chan error, 1)
	go func() {
		var err error
		s, err = recordPings(d, 3)
		flushed <- err
	}()
	<-busy // the writer found the lock held
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if m := <-moves; m.low || m.err != nil || m.nice != 0 {
		t.Fatalf("the writer moved to %+v; want up, to nice 0", m)
	}
	wantFrames(t, d, s, 3)
	if tid := d.writerTID.Load(); tid != 0 {
		t.Errorf("sharing the file, the writer is on lowered thread %d", tid)
	}
}

// Under real contention for every CPU, a low writer comes up rather than
// let its commits come late.
func TestWriter_ComesUpUnderLoad(t *testing.T) {
	moves := hops(t)
	calmFirst = time.Hour
	d := openInternal(t, Options{LowPriority: true})
	stop := make(chan struct{})
	defer close(stop)
	for range 4 * runtime.NumCPU() {
		go func() {
			runtime.LockOSThread() // a thread of normal priority that never rests
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	ctx := context.Background()
	s := &Session{Transport: Stdio, StartedAt: time.Now(), ExitCode: -1}
	if err := d.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(time.Minute)
	seq := int64(0)
	for up := false; !up; {
		seq++
		if err := d.Append(ctx, &Frame{SessionID: s.ID, Seq: seq, Direction: ClientToServer, Raw: []byte("{}\n")}); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-moves:
			if m.low {
				t.Fatal("the writer moved down under load")
			}
			up = true
		case <-deadline:
			t.Fatalf("after %d writes under load the writer is still low", seq)
		default:
		}
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	wantFrames(t, d, s, int(seq))
	if tid := d.writerTID.Load(); tid != 0 {
		t.Errorf("up, the writer is still on lowered thread %d", tid)
	}
}

func TestWriter_Hop(t *testing.T) {
	now := time.Now()
	for _, tc := range []struct {
		name     string
		low      bool
		shared   bool
		late     int           // commits in a row that came late
		full     bool          // a write waited for room
		normal   time.Duration // since normalSince
		lowFor   time.Duration // since lowSince
		calm     time.Duration
		want     bool
		wantCalm time.Duration
	}{
		{name: "low, on time", low: true, calm: calmFirst, want: false, wantCalm: calmFirst},
		{name: "low, late once", low: true, late: 1, calm: calmFirst, want: false, wantCalm: calmFirst},
		{name: "low, late twice soon after going down", low: true, late: 2, lowFor: time.Second, calm: 4 * time.Second, want: true, wantCalm: 8 * time.Second},
		{name: "low, late twice at the most calm", low: true, late: 2, lowFor: time.Second, calm: calmMax, want: true, wantCalm: calmMax},
		{name: "low, late twice after a long low spell", low: true, late: 2, lowFor: calmMax, calm: 8 * time.Second, want: true, wantCalm: calmFirst},
		{name: "low, the queue filled", low: true, full: true, lowFor: calmMax, calm: calmFirst, want: true, wantCalm: calmFirst},
		{name: "low, sharing the file", low: true, shared: true, lowFor: calmMax, calm: calmFirst, want: true, wantCalm: calmFirst},
		{name: "normal, calm long enough", normal: 2 * time.Second, calm: 2 * time.Second, want: true, wantCalm: 2 * time.Second},
		{name: "normal, not calm long enough", normal: time.Second, calm: 2 * time.Second, want: false, wantCalm: 2 * time.Second},
		{name: "normal, sharing the file", shared: true, normal: time.Hour, calm: calmFirst, want: false, wantCalm: calmFirst},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &writer{d: &DB{}, low: tc.low, shared: tc.shared, late: tc.late, full: tc.full, calm: tc.calm,
				normalSince: now.Add(-tc.normal), lowSince: now.Add(-tc.lowFor)}
			if got := w.hop(); got != tc.want {
				t.Errorf("hop() = %v, want %v", got, tc.want)
			}
			if w.calm != tc.wantCalm {
				t.Errorf("calm = %v, want %v", w.calm, tc.wantCalm)
			}
		})
	}
}

func TestWriter_NoteAge(t *testing.T) {
	now := time.Now()
	w := &writer{low: true}
	for i, c := range []struct {
		age  time.Duration // of the oldest write at the commit; 0 for none known
		want int
	}{{lateLimit + 1, 1}, {lateLimit + 1, 2}, {0, 0}, {lateLimit + 1, 1}, {lateLimit, 0}} {
		w.last, w.oldest = now, time.Time{}
		if c.age > 0 {
			w.oldest = now.Add(-c.age)
		}
		w.noteAge()
		if w.late != c.want || !w.oldest.IsZero() {
			t.Fatalf("commit %d (age %v): late = %d, oldest %v; want %d, zero", i+1, c.age, w.late, w.oldest, c.want)
		}
	}
}
