// Package audit reads recorded client traffic and reports the rules of
// the session's protocol revision that the client broke: headers on
// Streamable HTTP, methods a revision removed, the lifecycle, retries,
// pagination, answers to server requests, subscriptions and resumption.
//
// Each Rule names the revisions it applies to, its strength (a MUST is an
// error, a SHOULD a warning) and the specification section it comes from.
// A Rule's Check reads one *store.Recording and returns what it found;
// Audit runs the chosen rules over recordings. Writers render findings as
// text, JSON, JUnit XML and SARIF 2.1.0.
//
// A rule reports only what the wire shows: where keeping a rule depends
// on something the recording cannot see (what the client wanted, what it
// did with a notification), the rule is not checked here.
package audit
