// Package clock abstracts time so that recording offsets and replay pacing
// can be driven by a fake clock in tests. recorder.Stdio, recorder.HTTP
// and replayer.Server take a Clock; nil means Real. Implement Clock to
// control time yourself, or use Fake, which moves only when Advance is
// called:
//
//	fake := clock.NewFake(time.Unix(0, 0))
//	srv := &replayer.Server{Recordings: recs, Pace: 1, Clock: fake}
//	// ... a paced answer waits until fake.Advance covers its gap
package clock

import (
	"sync"
	"time"
)

// Clock tells the time and makes timers. Implementations are safe for
// concurrent use.
type Clock interface {
	// Now returns the current time. Offsets are computed with Since on
	// values returned by Now, so a real clock's monotonic reading is used.
	Now() time.Time
	// After returns a channel that receives the time once d has elapsed.
	After(d time.Duration) <-chan time.Time
	// At returns a channel that receives the time once it is t or later.
	// Waiting for a deadline with At rather than After(t.Sub(Now())) does
	// not lose the time that passes between the two calls.
	At(t time.Time) <-chan time.Time
}

// Real is the wall clock. Its zero value is ready to use.
type Real struct{}

// Now returns time.Now().
func (Real) Now() time.Time { return time.Now() }

// After returns time.After(d).
func (Real) After(d time.Duration) <-chan time.Time { return time.After(d) }

// At returns time.After(time.Until(t)).
func (Real) At(t time.Time) <-chan time.Time { return time.After(time.Until(t)) }

// Fake is a clock that only moves when Advance is called. Its zero value
// starts at the zero time; use NewFake for a readable start. It is safe for
// concurrent use.
type Fake struct {
	mu      sync.Mutex // guards now and waiters
	now     time.Time
	waiters []fakeWaiter
}

type fakeWaiter struct {
	at time.Time
	c  chan time.Time
}

// NewFake returns a fake clock set to t.
func NewFake(t time.Time) *Fake { return &Fake{now: t} }

// Now returns the fake time.
func (f *Fake) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// After returns a channel that fires when the fake time reaches now+d. A
// non-positive d fires at once.
func (f *Fake) After(d time.Duration) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.at(f.now.Add(d))
}

// At returns a channel that fires when the fake time reaches t; at once
// if it has.
func (f *Fake) At(t time.Time) <-chan time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.at(t)
}

// at registers a timer for t. The caller holds f.mu.
func (f *Fake) at(t time.Time) <-chan time.Time {
	c := make(chan time.Time, 1)
	if !t.After(f.now) {
		c <- f.now
		return c
	}
	f.waiters = append(f.waiters, fakeWaiter{at: t, c: c})
	return c
}

// Advance moves the fake time forward by d and fires every timer that is
// due.
func (f *Fake) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	kept := f.waiters[:0]
	for _, w := range f.waiters {
		if w.at.After(f.now) {
			kept = append(kept, w)
			continue
		}
		w.c <- f.now
	}
	f.waiters = kept
}

// Waiters reports how many timers are pending. Tests use it to wait until
// the code under test has asked for a timer before advancing.
func (f *Fake) Waiters() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.waiters)
}
