// Package diff compares two recorded sessions, request by request, and
// reports how their answers differ: the paths that changed, were added
// or removed, the requests only one session sent, what the server sent on
// its own. Reports are text for people, JSON for tools and JUnit XML for
// CI.
//
// # Noise
//
// Ids, session ids, progress tokens, cursors, requestState, timestamps,
// UUIDs, SSE event ids, the order of notifications and of
// tools/prompts/resources lists never count. More noise is a Noise mask of
// Paths (see PathSyntax): given by the user, or learned by Learn from two
// runs of the same release, and stored with a session under NoiseLabel.
//
// # Tasks
//
// The polls (tasks/get) of a task the client created are compared per
// task, as the sequence of distinct states they saw and the last answer,
// not paired one by one: more or fewer polls of the same state are no
// difference (see Compare).
//
// # Lifecycle
//
// Everything here is a pure function of its inputs, store.Recording
// values that it only reads: Compare and Learn return new values, and a
// Report is plain data, safe to share once built.
//
// # Walkthrough
//
//	old, _ := db.Recording(ctx, 3)
//	new, _ := db.Recording(ctx, 7)
//	noise, _ := diff.SessionNoise(old.Session) // the mask stored with 3
//	r := diff.Compare(old, new, noise)
//	r.WriteText(os.Stdout)
//	if r.Differs() { ... }
//
// Sessions does the same from a DB and two session ids.
package diff
