// Package procs fits the Go runtime's parallelism to the load of a proxy
// that shares its machine with the client and the server it sits between.
//
// A Go program whose goroutines hand work to one another, as a proxy's do
// for every request, wakes an idle processor (P) for each hand-over when
// it has one: a thread wakes, looks for work, finds none and sleeps
// again. While one exchange is under way at a time that buys nothing, and
// on a machine of few CPUs it takes them from the client and the server.
// mcpvcr's bench measured it on two CPUs: record used about a quarter
// less CPU per request at one request at a time with one P, and its
// median latency came within the passthrough's, but with one P it
// answered fewer requests per second at eight at a time. So a Fitter
// runs the program on one P while at most one exchange is under way, and
// on all of them once two are, until it has been calm for a while.
package procs

import (
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// calm is how long at most one exchange must have been under way before
// the Fitter goes back to one P. Changing GOMAXPROCS stops the world for
// a moment; a client that overlaps two requests now and then changes it
// at most twice per calm.
const calm = 100 * time.Millisecond

// Fitter sets GOMAXPROCS from the number of exchanges under way. A nil
// *Fitter does nothing.
type Fitter struct {
	full int
	// now and after are time.Now and time.AfterFunc, but in tests.
	now    func() time.Time
	after  func(time.Duration, func())
	busyAt atomic.Int64 // when two or more were last under way (UnixNano)
	wide   atomic.Bool  // GOMAXPROCS is full
	armed  atomic.Bool  // a settle is scheduled
	mu     sync.Mutex   // serializes changes of GOMAXPROCS
}

// New returns a Fitter and sets GOMAXPROCS to 1, or returns nil and
// changes nothing when the runtime has one P anyway or the GOMAXPROCS
// environment variable chose the number (the user's choice wins).
func New() *Fitter {
	full := runtime.GOMAXPROCS(0)
	if full <= 1 || os.Getenv("GOMAXPROCS") != "" {
		return nil
	}
	runtime.GOMAXPROCS(1)
	return &Fitter{full: full, now: time.Now, after: func(d time.Duration, f func()) { time.AfterFunc(d, f) }}
}

// Active tells f that n exchanges are under way. It is cheap while n
// stays on one side of two.
func (f *Fitter) Active(n int) {
	if f == nil {
		return
	}
	if n >= 2 {
		f.busyAt.Store(f.now().UnixNano())
		if !f.wide.Load() {
			f.mu.Lock()
			if !f.wide.Load() {
				runtime.GOMAXPROCS(f.full)
				f.wide.Store(true)
			}
			f.mu.Unlock()
		}
		return
	}
	if f.wide.Load() && f.armed.CompareAndSwap(false, true) {
		f.after(calm, f.settle)
	}
}

// settle goes back to one P if the load has been calm for calm, and looks
// again later if it has not.
func (f *Fitter) settle() {
	f.mu.Lock()
	defer f.mu.Unlock()
	left := calm - f.now().Sub(time.Unix(0, f.busyAt.Load()))
	if left > 0 {
		f.after(left, f.settle)
		return
	}
	runtime.GOMAXPROCS(1)
	f.wide.Store(false)
	f.armed.Store(false)
}
