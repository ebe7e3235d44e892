package replayer

import (
	"context"

	"github.com/mcpvcr/mcpvcr/internal/match"
	"github.com/mcpvcr/mcpvcr/internal/redact"
	"github.com/mcpvcr/mcpvcr/store"
)

// Match says how a live client frame is compared with recorded ones. The
// zero Match is the tolerant default: JSON-RPC ids, progress tokens and
// trace context never count; clientInfo (the initialize params' and the
// 2026-07-28 _meta client info) is ignored, absent params equal {}, numbers
// compare by value and object keys in any order. Its fields: Exact
// (compare as recorded), Ignore (more Rules), Redact (more member names
// whose values never count, beyond RedactedJSON) and Scrubbed (leave out
// what mcpvcr scrub replaces; set for sessions labelled ScrubLabel).
type Match = match.Match

// Rule is a matching rule that ignores part of a client message: Apply
// removes it from the message decoded as {"method": …, "params": …}, or
// a client's answer to a server request as {"method": <the server
// request's>, "result": …} or {…, "error": …}; String is the rule as a
// user writes it.
type Rule = match.Rule

// Sessions names the sessions a replay serves, whose stored rules
// StoredMatch reads: sessions IDs of DB (every session when IDs is
// empty), or, when DB is nil, Recordings as loaded.
type Sessions = match.Sessions

// MatchIgnoreLabel is the session label that stores --ignore matching
// rules with a recording, one path per line; replay applies them.
const MatchIgnoreLabel = store.LabelMatchIgnore

// ScrubLabel is the session label mcpvcr scrub sets.
const ScrubLabel = store.LabelScrubbed

// RedactedJSON are the JSON members whose string values replay never
// compares (the recorder's defaults): password, secret, api_key, token,
// access_token, refresh_token, client_secret, authorization, private_key,
// passphrase, passwd, pin, credential: redact.DefaultNames, the one list.
var RedactedJSON []string = redact.DefaultNames

// RedactLabel is the session label under which the recorder stores the
// JSON member names it redacted beyond RedactedJSON, one per line;
// replay ignores those values too.
const RedactLabel = store.LabelRedactJSON

// StoredMatch returns mt with the rules a replay of sessions s matches
// by: ignore (paths in the syntax of mcpvcr verify --ignore, one or more
// a line: the caller's own), then the sessions' MatchIgnoreLabel paths,
// each path once in that order; the JSON members the recorder redacted
// beyond RedactedJSON (RedactLabel), each once; and Scrubbed if any
// session carries ScrubLabel. A path that does not parse is an error
// wrapping the path error (errors.Is ErrBadPath of package diff); an
// error reading DB is returned as it is.
func StoredMatch(ctx context.Context, mt Match, ignore []string, s Sessions) (Match, error) {
	return match.Stored(ctx, mt, ignore, s)
}
