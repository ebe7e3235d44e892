package procs

import (
	"runtime"
	"testing"
	"time"
)

// fitter returns a Fitter over a runtime of full Ps whose timers and
// clock the test drives: the scheduled settles are in *due.
func fitter(t *testing.T, full int) (f *Fitter, now *time.Time, due *[]func()) {
	t.Helper()
	was := runtime.GOMAXPROCS(full)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	t.Setenv("GOMAXPROCS", "") // as if unset: Getenv sees ""
	f = New()
	if f == nil {
		t.Fatalf("New() = nil with %d Ps and GOMAXPROCS unset", full)
	}
	now, due = new(time.Time), new([]func())
	*now = time.Unix(1000, 0)
	f.now = func() time.Time { return *now }
	f.after = func(d time.Duration, fn func()) { *due = append(*due, fn) }
	return f, now, due
}

func procs() int { return runtime.GOMAXPROCS(0) }

func TestFitter_OneAtATimeRunsOnOneP(t *testing.T) {
	f, _, due := fitter(t, 4)
	if procs() != 1 {
		t.Fatalf("GOMAXPROCS = %d after New; want 1", procs())
	}
	for range 3 {
		f.Active(1)
		f.Active(0)
	}
	if procs() != 1 || len(*due) != 0 {
		t.Errorf("GOMAXPROCS = %d, %d settles scheduled, one exchange at a time; want 1 and none", procs(), len(*due))
	}
}

func TestFitter_TwoAtOnceGetEveryP(t *testing.T) {
	f, now, due := fitter(t, 4)
	f.Active(1)
	f.Active(2)
	if procs() != 4 || !f.wide.Load() {
		t.Fatalf("GOMAXPROCS = %d with two exchanges under way; want 4", procs())
	}
	f.Active(1)
	f.Active(0)
	if len(*due) != 1 {
		t.Fatalf("%d settles scheduled once the load fell; want 1", len(*due))
	}
	// Busy again before the settle runs: it looks again later.
	*now = now.Add(calm / 2)
	f.Active(2)
	f.Active(1)
	*now = now.Add(calm / 2)
	(*due)[0]()
	if procs() != 4 || len(*due) != 2 {
		t.Fatalf("GOMAXPROCS = %d, %d settles, when the load was busy %v ago; want 4 and a second settle", procs(), len(*due), calm/2)
	}
	*now = now.Add(calm)
	(*due)[1]()
	if procs() != 1 || f.wide.Load() {
		t.Fatalf("GOMAXPROCS = %d after a calm of %v; want 1", procs(), calm)
	}
	// Busy once more: every P again, and one settle scheduled for it.
	f.Active(3)
	f.Active(0)
	f.Active(0)
	if procs() != 4 || len(*due) != 3 {
		t.Errorf("GOMAXPROCS = %d, %d settles, busy again; want 4 and 3", procs(), len(*due))
	}
}

func TestNew_LeavesAChosenGOMAXPROCS(t *testing.T) {
	was := runtime.GOMAXPROCS(4)
	t.Cleanup(func() { runtime.GOMAXPROCS(was) })
	t.Setenv("GOMAXPROCS", "4")
	if f := New(); f != nil || procs() != 4 {
		t.Errorf("New() = %v, GOMAXPROCS %d, with GOMAXPROCS=4 in the environment; want nil and 4", f, procs())
	}
	t.Setenv("GOMAXPROCS", "")
	runtime.GOMAXPROCS(1)
	if f := New(); f != nil {
		t.Errorf("New() = %v on one P; want nil", f)
	}
	var f *Fitter
	f.Active(5) // a nil Fitter does nothing
	if procs() != 1 {
		t.Errorf("GOMAXPROCS = %d after a nil Fitter's Active; want 1", procs())
	}
}
