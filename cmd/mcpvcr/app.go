package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/store"
)

// Exit codes, as design.md §1 sets them.
const (
	exitOK          = 0
	exitDiffer      = 1 // differences found, or a replay saw unmatched traffic
	exitUsage       = 2
	exitFailure     = 3
	defaultCassette = "mcpvcr.db"
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

// env is what every command gets besides its flags.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	logger *slog.Logger
	getenv func(string) string
}

// run builds the app and runs it; it returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.Getenv,
		logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	app := newApp(e)
	err := app.RunContext(ctx, hoistFlags(app, args))
	return report(stderr, err)
}

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
		fmt.Fprintf(w, "mcpvcr: %v\n", ee.err)
		if ee.hint != "" {
			fmt.Fprintf(w, "try: %s\n", ee.hint)
		}
		return ee.code
	}
	// Errors from urfave/cli itself are about flags and arguments.
	fmt.Fprintf(w, "mcpvcr: %v\n", err)
	fmt.Fprintln(w, "try: mcpvcr --help")
	return exitUsage
}

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:  "mcpvcr",
		Usage: "record and replay Model Context Protocol sessions",
		Description: "mcpvcr sits between an MCP client and an MCP server, forwards every byte unchanged and\n" +
			"records each frame into a cassette (one SQLite file). It then replays a session as the\n" +
			"server, offline and deterministically, for tests and bug reports.",
		Reader:               e.stdin,
		Writer:               e.stdout,
		ErrWriter:            e.stderr,
		HideHelpCommand:      true,
		EnableBashCompletion: false,
		ExitErrHandler:       func(*cli.Context, error) {}, // run() reports errors
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return usageErr("mcpvcr --help", "%v", err)
		},
		Flags: []cli.Flag{cassetteFlag()},
		Commands: []*cli.Command{
			recordCommand(e),
			replayCommand(e),
			lsCommand(e),
			showCommand(e),
			exportCommand(e),
			viewCommand(e),
			importCommand(e),
			verifyCommand(e),
			diffCommand(e),
			checkCommand(e),
		},
	}
	for _, c := range app.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = func(cc *cli.Context, err error, _ bool) error {
				return usageErr("mcpvcr "+cc.Command.Name+" --help", "%v", err)
			}
		}
	}
	return app
}

func cassetteFlag() cli.Flag {
	return &cli.StringFlag{
		Name:    "cassette",
		Aliases: []string{"c"},
		Usage:   "cassette file: a `PATH` to a .db cassette (or, where reading, a .jsonl export)",
		EnvVars: []string{"MCPVCR_CASSETTE"},
		Value:   defaultCassette,
	}
}

// cassettePath returns the cassette named by the command's or the app's
// --cassette flag.
func cassettePath(c *cli.Context) string {
	for _, cc := range c.Lineage() {
		if cc.IsSet("cassette") {
			return cc.String("cassette")
		}
	}
	return c.String("cassette")
}

// openForRead opens a cassette (.db or .jsonl) that must exist.
func openForRead(c *cli.Context) (*store.DB, error) {
	path := cassettePath(c)
	fi, err := os.Stat(path)
	if err == nil && fi.Size() == 0 {
		return nil, failErr(fmt.Errorf("cassette %s is empty (0 bytes): nothing has been recorded into it", path),
			"record into it with mcpvcr record --cassette "+path)
	}
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, failErr(fmt.Errorf("cassette %s does not exist", path),
				"record one first (mcpvcr record -- SERVER...), or name it with --cassette PATH")
		}
		return nil, failErr(fmt.Errorf("cassette %s: %w", path, err), "")
	}
	db, err := store.OpenFile(c.Context, path)
	if err != nil {
		return nil, openErr(path, err)
	}
	return db, nil
}

// openForWrite opens or creates a .db cassette.
func openForWrite(c *cli.Context) (*store.DB, error) {
	path := cassettePath(c)
	db, err := store.Open(c.Context, path)
	if err != nil {
		return nil, openErr(path, err)
	}
	return db, nil
}

func openErr(path string, err error) error {
	switch {
	case errors.Is(err, store.ErrNotCassette):
		return failErr(err, "name an mcpvcr cassette with --cassette PATH (a .db file mcpvcr wrote, or a .jsonl export)")
	case errors.Is(err, store.ErrNewerSchema):
		return failErr(err, "install a newer mcpvcr: go install github.com/mcpvcr/mcpvcr/cmd/mcpvcr@latest")
	}
	return failErr(err, "check that "+path+" is a writable file path")
}
