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
