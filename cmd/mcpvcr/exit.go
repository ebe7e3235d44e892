package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/diff"
	"github.com/mcpvcr/mcpvcr/internal/args"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
	"github.com/mcpvcr/mcpvcr/verify"
)

// This file maps what the libraries return to exit codes and to the
// "try:" hints users read: the one place cmd decides either.

// Exit codes, as design.md §1 sets them.
const (
	exitOK      = 0
	exitDiffer  = 1 // differences found, or a replay saw unmatched traffic
	exitUsage   = 2
	exitFailure = 3
)

// exitError carries an exit code and a hint for the user.
type exitError struct {
	code int
	err  error
	hint string
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// usageErr is a mistake in how mcpvcr was called.
func usageErr(hint string, format string, args ...any) error {
	return &exitError{code: exitUsage, err: fmt.Errorf(format, args...), hint: hint}
}

// failErr is a failure to do what was asked.
func failErr(err error, hint string) error {
	return &exitError{code: exitFailure, err: err, hint: hint}
}

// differErr reports differences or unmatched traffic; the details have
// already been written.
var errDiffer = &exitError{code: exitDiffer, err: errors.New("differences found")}

// report prints err the way users read it and returns its exit code.
func report(w io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee == errDiffer {
			return exitDiffer
		}
		fmt.Fprintf(w, "mcpvcr: %s\n", termtext.Text(ee.err.Error()))
		if ee.hint != "" {
			fmt.Fprintf(w, "try: %s\n", termtext.Text(ee.hint))
		}
		return ee.code
	}
	// Errors from urfave/cli itself are about flags and arguments.
	fmt.Fprintf(w, "mcpvcr: %s\n", termtext.Text(err.Error()))
	fmt.Fprintln(w, "try: mcpvcr --help")
	return exitUsage
}

// noSessionErr reports err, which names a session the cassette at path
// does not hold.
func noSessionErr(path string, err error) error {
	return failErr(fmt.Errorf("cassette %s: %w", path, err), "mcpvcr ls --cassette "+path+" to see the sessions")
}

func openErr(path string, err error) error {
	switch {
	case errors.Is(err, store.ErrNotCassette), errors.Is(err, store.ErrNotExport):
		return failErr(err, "name an mcpvcr cassette with --cassette PATH (a .db file mcpvcr wrote, or a .jsonl export)")
	case errors.Is(err, store.ErrNewerSchema):
		return failErr(err, "install a newer mcpvcr: go install github.com/mcpvcr/mcpvcr/cmd/mcpvcr@latest")
	case errors.Is(err, store.ErrDamaged):
		return failErr(err, "mcpvcr check "+path+" to see what is damaged and how to rescue the rest")
	case errors.As(err, new(*store.LineError)):
		return failErr(err, "mcpvcr check "+path+" names each line that does not import: fix them (the file is text), or export the session again from its cassette")
	case errors.Is(err, store.ErrForeignSchema):
		var fe *store.ForeignSchemaError
		errors.As(err, &fe)
		return failErr(err, foreignHint(path, fe))
	}
	if format, _ := store.Sniff(path); format == store.JSONL || strings.EqualFold(filepath.Ext(path), ".jsonl") {
		// An export is only read: that it be writable is beside the point.
		return failErr(err, "check that "+path+" is a readable file, an export mcpvcr wrote: mcpvcr check "+path+" says what does not import")
	}
	return failErr(err, "check that "+path+" is a writable file path")
}

// foreignHint says what to do with a cassette whose schema holds objects
// mcpvcr never creates (fe, which may be nil).
func foreignHint(path string, fe *store.ForeignSchemaError) string {
	hint := "do not use a cassette from someone else as it is: ask its sender for a JSONL export (mcpvcr export --cassette FILE -o FILE.jsonl) and import that"
	if fe != nil && len(fe.Changed) == 0 {
		hint += "; if you made these objects yourself, remove them: sqlite3 " + path + " '" + fe.Drops() + "'"
	}
	return hint
}

// checkErr maps a check that could not run to exit 3 and a hint.
func checkErr(path string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return failErr(fmt.Errorf("cassette %s does not exist", path), "name a cassette: mcpvcr check PATH (a .db cassette or a .jsonl export)")
	case errors.Is(err, store.ErrEmpty):
		return failErr(fmt.Errorf("cassette %s is empty (0 bytes): nothing has been recorded into it", path), "")
	}
	return openErr(path, err)
}

// verifyErr maps what verify.Cassette returned to an exit code and hint.
func verifyErr(c *cli.Context, id int64, t verify.Target, err error) error {
	path := cassettePath(c)
	var (
		ue *verify.UnverifiableError
		re *verify.RevisionError
		se *recorder.StartError
	)
	switch {
	case errors.Is(err, verify.ErrTemporary):
		return usageErr("mcpvcr import "+path+" --cassette bug.db, then verify with --cassette bug.db",
			"--learn and --update store into the cassette, and %s is a JSONL export", path)
	case errors.Is(err, verify.ErrWrongTransport):
		which := ""
		if id != 0 {
			which = fmt.Sprintf(" %d", id)
		}
		hint := fmt.Sprintf("mcpvcr verify%s --upstream URL (the live server's MCP endpoint)", which)
		if t.URL != nil {
			hint = fmt.Sprintf("mcpvcr verify%s -- SERVER_COMMAND [ARGS...]", which)
		}
		return usageErr(hint, "%w", err)
	case errors.Is(err, store.ErrNotFound):
		return noSessionErr(path, err)
	case errors.Is(err, verify.ErrNoSessions):
		hint := "record one first: mcpvcr record -- SERVER_COMMAND"
		if t.URL != nil {
			hint = "record one first: mcpvcr record --upstream URL"
		}
		return failErr(fmt.Errorf("cassette %s: %w", path, err), hint)
	case errors.As(err, &se):
		return failErr(err, "check that the command after -- runs on its own: "+t.String())
	case errors.Is(err, verify.ErrUnreachable):
		return failErr(err, "start the server first, or check --upstream")
	case errors.Is(err, verify.ErrNotRecorded):
		return failErr(err, "free disk space or choose another --cassette")
	case errors.Is(err, verify.ErrNotLearned):
		return failErr(err, "learn with a server release that runs the session to the end")
	case errors.Is(err, verify.ErrNotUpdated):
		return &exitError{code: exitDiffer, err: err, hint: "fix the server, then run verify --update again"}
	case errors.Is(err, diff.ErrBadPath):
		return failErr(err, "fix or delete the label with mcpvcr export/import")
	case errors.Is(err, verify.ErrNoClientFrames):
		return failErr(err, "verify a session in which a client spoke: mcpvcr ls, mcpvcr show SESSION")
	case errors.Is(err, verify.ErrUnsupported):
		return failErr(err, "verify a session recorded over stdio, Streamable HTTP or HTTP+SSE")
	case errors.As(err, &re):
		return failErr(err, fmt.Sprintf("run a server that speaks %s, or record a new session at the revision this one speaks", re.Recorded))
	case errors.As(err, &ue) && errors.Is(err, verify.ErrNoAnswer):
		if t.URL != nil {
			return failErr(err, "check that the server at "+t.String()+" answers MCP: mcpvcr record --upstream "+t.String()+" and connect a client")
		}
		return failErr(err, "check that the server starts and answers: run "+t.String()+" on its own")
	}
	return failErr(err, "")
}

// replayErr maps a replay session selection failure to exit 3 and a hint.
func replayErr(c *cli.Context, err error) error {
	var (
		te  *args.TransportError
		nre *args.NoRecordingsError
	)
	switch {
	case errors.As(err, &te) && te.Transport == store.Stdio:
		return failErr(err, "mcpvcr replay "+a(te.Session)+" --stdio")
	case errors.As(err, &te):
		return failErr(err, "mcpvcr replay "+a(te.Session)+" --listen 127.0.0.1:8080")
	case errors.Is(err, store.ErrNotFound):
		return noSessionErr(cassettePath(c), err)
	case errors.As(err, &nre) && nre.Have[store.Stdio] > 0 && nre.Want != store.Stdio:
		return failErr(fmt.Errorf("cassette %s: %w", cassettePath(c), err), "replay its stdio sessions with mcpvcr replay --stdio --cassette "+cassettePath(c))
	case errors.As(err, &nre) && len(nre.Have) > 0 && nre.Want == store.Stdio:
		return failErr(fmt.Errorf("cassette %s: %w", cassettePath(c), err), "serve them over HTTP: mcpvcr replay --listen 127.0.0.1:8080 --cassette "+cassettePath(c))
	case errors.Is(err, replayer.ErrNoRecordings):
		return failErr(fmt.Errorf("cassette %s: %w", cassettePath(c), err), "record one with mcpvcr record, or name another --cassette")
	}
	return failErr(err, "")
}
