package store

// The session labels mcpvcr reads and writes (Session.Labels), each with
// what its value holds. Labels travel with their session in JSONL
// exports. This file is the one place they are defined: the packages that
// give a label a name of their own (replayer.RedactLabel, diff.NoiseLabel,
// verify.LabelVerifyOf, …) define it as one of these, and
// internal/apicheck fails on a label defined anywhere else.
const (
	// LabelRedactJSON holds the JSON member names a recording redacted
	// on top of the defaults, one per line ("off" as its only line when
	// it redacted none); replay ignores their values too.
	LabelRedactJSON = "redact-json"
	// LabelScrubbed marks a session mcpvcr scrub wrote (its value is the
	// version of the rules, "v1"); replay then leaves out of the
	// comparison what scrub replaces.
	LabelScrubbed = "scrubbed"
	// LabelMatchIgnore holds --ignore matching rules stored with a
	// recording, one path per line; replay applies them.
	LabelMatchIgnore = "match-ignore"
	// LabelNoise holds a session's noise mask: the paths whose
	// differences diff and verify ignore for it, one per line, as
	// verify's learning stores them.
	LabelNoise = "mcpvcr.noise"
	// LabelVerifyOf marks a verify run with the id of the session it
	// verified.
	LabelVerifyOf = "mcpvcr.verify-of"
	// LabelSupersededBy marks an expectation that verify --update
	// replaced with the session it names.
	LabelSupersededBy = "mcpvcr.superseded-by"
	// LabelSupersedes marks the session verify --update made the
	// expectation with the id of the session it replaced.
	LabelSupersedes = "mcpvcr.supersedes"
)
