package store

import (
	"errors"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Several processes may use one cassette at once: recorders started
// together by a client app, and ls, show or replay beside them. SQLite
// lets one of them write at a time.
//
// The writer's connection does not use SQLite's busy handler, which
// sleeps longer and longer (1, 2, 5, 10, ... 100 ms) between tries: a
// writer that waits behind an active one wakes up rarely and finds the
// lock taken again, and it starved for seconds behind recorders that
// commit every few milliseconds. Instead every step that takes the write
// lock (BEGIN, COMMIT, Open's migrations) is retried here at short fixed
// intervals, and a writer that shares the file pauses between its
// transactions (see yieldGap), so that the lock changes hands between
// any number of writers within a few milliseconds.

// busyRetryFor bounds how long retryBusy keeps trying. A variable for
// tests.
var busyRetryFor = 30 * time.Second

// busyWait is the pause between two tries of a step that found the file
// busy.
const busyWait = 500 * time.Microsecond

// onBusy, if set, is called each time retryBusy finds the file busy:
// tests wait on it.
var onBusy func()

// retryBusy runs fn until it returns something other than SQLITE_BUSY or
// SQLITE_LOCKED, or busyRetryFor has passed, waiting busyWait between
// tries.
func retryBusy(fn func() error) error {
	deadline := time.Now().Add(busyRetryFor)
	for {
		err := fn()
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		if onBusy != nil {
			onBusy()
		}
		time.Sleep(busyWait)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED:
// another connection holds a lock that the statement needs.
func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}
