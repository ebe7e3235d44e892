// Package verify sends the client side of a recorded session to a live
// server (a command over stdio, or a URL over Streamable HTTP or HTTP+SSE)
// at the revision it was recorded with, answers the server's own requests
// as the recorded client did, records the run, and compares it with the
// recording (package diff).
//
// # Two levels
//
// A Verifier drives one recording against one connection it is handed
// (RunStdio, RunHTTP) and reports the run. Cassette is the workflow
// mcpvcr verify runs on top: it starts the server (through
// recorder.Command, the process plumbing it shares with mcpvcr record),
// records the run into the cassette as a session labelled LabelVerifyOf,
// compares, and keeps the expectation labels: Learn learns the noise that
// differs between two runs of the old release (and Save stores it), the
// write guard keeps tool calls that may write from a server it did not
// start (WriteGuard), Update makes the run the
// expectation in place of the recording (LabelSupersededBy,
// LabelSupersedes), and later runs compare with the newest expectation.
//
// # Tasks
//
// A task the recorded client created (a request with params.task whose
// answer carried the task, revision 2025-11-25) is followed by its state,
// not poll by poll: its recorded tasks/get and tasks/result go no earlier
// than their recorded time since the task's creation, counted from when
// the live task was created, with the task id the live server minted; a
// tasks/get whose live answer shows another state than the recorded one,
// not a terminal one, is followed by polls of verify's own (ids
// "mcpvcr-verify-poll-N"), at the recorded interval, until the live task
// reaches the recorded state, ends, or twice the poll's recorded time
// since the creation plus 5 seconds has passed. package diff compares a
// task's polls as the sequence of distinct states they saw and the last
// answer, so more or fewer working polls are no difference, and another
// terminal state or result is. See docs/tasks.md.
//
// # Lifecycle
//
// Cassette returns when every session is verified; the servers it started
// have exited by then (stdin closed, then SIGTERM and SIGKILL for one that
// lingers). The DB stays the caller's to close.
//
// # Walkthrough
//
//	db, _ := store.OpenFile(ctx, "bug.db")
//	defer db.Close()
//	reports, err := verify.Cassette(ctx, db, verify.Options{
//		Session: 3,
//		Target:  verify.Target{Command: []string{"./my-server-v2"}},
//	})
//	// err: the server could not be verified (an *UnverifiableError, a
//	// *recorder.StartError, ErrUnreachable, ...); reports[0].Differs():
//	// it answered differently.
package verify
