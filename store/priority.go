package store

import "time"

// The writer's CPU priority.
//
// On two CPUs the writer's work for one request used to run beside the
// forwarding of the next: the client, the server and the proxy then
// waited for a CPU the writer held, and the scheduler let it finish its
// slice. So the writer runs on a thread of its own at the lowest
// priority (nice 19, where the system allows it): whatever forwards
// takes the CPU from it at once, and it writes in what is left.
//
// A low priority must not starve the writer when other work keeps every
// CPU busy: what a crash loses would grow past the commit interval, and a
// full queue would hold up forwarding. A low writer waits for CPUs often,
// and that is the point; so what brings it up is harm, not waiting. It
// schedules its commits at lowCommit, half the interval, to leave the
// rest for that wait. If two commits in a row each came more than
// lateLimit after the oldest write they hold was accepted, or a write had
// to wait for room in the queue, it moves to a thread of normal priority
// (an unprivileged thread cannot raise its own). It goes back down after
// calm, which doubles each time it had to come up again within calmMax of
// going down and starts over after a low spell of calmMax. A writer that
// shares the file with another process's writer stays at normal
// priority: those wait for the lock it holds while it writes. A writer
// tells that by finding the lock held (SQLITE_BUSY), not by a slow
// BEGIN, which at low priority may only have waited for a CPU.
const lowCommit = commitInterval / 2

var (
	lateLimit = commitInterval
	calmFirst = time.Second
	calmMax   = time.Minute
)

// onHop, if set, is called by a writer each time it has moved to a thread
// of the other priority, with whether that one is low: tests wait on it.
var onHop func(d *DB, low bool)

// drive runs loop until the queue is closed and drained, on a thread of
// low priority or of normal priority as hop decides.
func (w *writer) drive() {
	w.timer = time.NewTimer(commitInterval)
	w.timer.Stop()
	w.calm = calmFirst
	w.normalSince = time.Now()
	w.cannotLower = !w.d.lowWriter
	low := !w.cannotLower
	hopped := false
	for {
		finished := make(chan bool, 1)
		run := func(tid int) {
			w.low, w.late, w.full = tid != 0, 0, false
			w.d.writerTID.Store(int32(tid))
			if hopped && onHop != nil {
				onHop(w.d, w.low)
			}
			finished <- w.loop()
		}
		if !low || !runLowered(run) {
			w.cannotLower = w.cannotLower || low
			go run(0)
		}
		if <-finished {
			w.d.writerTID.Store(0)
			return
		}
		low, hopped = !w.low, true
	}
}

// hop reports whether the writer should move to a thread of the other
// priority before it takes the queue.
func (w *writer) hop() bool {
	if w.cannotLower {
		return false
	}
	now := time.Now()
	if w.low {
		if w.late < 2 && !w.full && !w.shared {
			return false
		}
		if now.Sub(w.lowSince) < calmMax {
			w.calm = min(2*w.calm, calmMax)
		} else {
			w.calm = calmFirst
		}
		w.normalSince = now
		return true
	}
	if w.shared || now.Sub(w.normalSince) < w.calm {
		return false
	}
	w.lowSince = now
	return true
}

// noteAge counts, after a commit at low priority, the commits in a row
// that came late.
func (w *writer) noteAge() {
	if w.low && !w.oldest.IsZero() && w.last.Sub(w.oldest) > lateLimit {
		w.late++
	} else {
		w.late = 0
	}
	w.oldest = time.Time{}
}
