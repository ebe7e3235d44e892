package store

import (
	"errors"
	"time"

	"github.com/mattn/go-sqlite3"
)

// Several processes may use one cassette at once: recorders started
// together by a client app, and ls, show or replay beside them. SQLite
// lets one of them write at a time. Every connection waits up to its
// busy timeout for the lock (see the connection settings); what still
// finds the file busy after that, or is refused at once (as COMMIT and
// some schema changes can be), is retried here.

// busyRetryFor bounds how long retryBusy keeps trying. A variable for
// tests.
var busyRetryFor = 30 * time.Second

// retryBusy runs fn until it returns something other than SQLITE_BUSY or
// SQLITE_LOCKED, or busyRetryFor has passed, backing off from 1 ms to
// 50 ms between tries.
func retryBusy(fn func() error) error {
	deadline := time.Now().Add(busyRetryFor)
	wait := time.Millisecond
	for {
		err := fn()
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(wait)
		wait = min(2*wait, 50*time.Millisecond)
	}
}

// isBusy reports whether err is SQLite's SQLITE_BUSY or SQLITE_LOCKED:
// another connection holds a lock that the statement needs.
func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}
