package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/store"
)

// defaultCassette is the cassette used when none is named.
const defaultCassette = "mcpvcr.db"

// env is what every command gets besides its flags.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	logger *slog.Logger
	// args is the command line as typed, for messages that echo it.
	args []string
}

// client is stdin and stdout as one stream: the client's side of a stdio
// session that record or replay serves.
func (e *env) client() io.ReadWriter {
	return struct {
		io.Reader
		io.Writer
	}{e.stdin, e.stdout}
}

// run builds the app and runs it; it returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, args: args,
		logger: slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	app := newApp(e)
	if err := unknownCommand(app, args); err != nil {
		return report(stderr, err)
	}
	err := app.RunContext(ctx, hoistFlags(app, args))
	return report(stderr, err)
}

// The version has no short flag: -v is a command's own (show -v prints
// payloads), not --version.
func init() {
	cli.VersionFlag = &cli.BoolFlag{Name: "version", Usage: "print the version and the commit it was built from"}
}

func newApp(e *env) *cli.App {
	app := &cli.App{
		Name:  "mcpvcr",
		Usage: "record and replay Model Context Protocol sessions",
		Description: "mcpvcr sits between an MCP client and an MCP server, forwards every byte unchanged and\n" +
			"records each frame into a cassette (one SQLite file). It then replays a session as the\n" +
			"server, offline and deterministically, for tests and bug reports.",
		Version:              version(),
		Reader:               e.stdin,
		Writer:               e.stdout,
		ErrWriter:            e.stderr,
		EnableBashCompletion: true,
		ExitErrHandler:       func(*cli.Context, error) {}, // run() reports errors
		OnUsageError: func(_ *cli.Context, err error, _ bool) error {
			return flagUsageErr("mcpvcr", nil, e.args, err)
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
			auditCommand(e),
			scrubCommand(e),
			completionCommand(e),
		},
	}
	addExitCodes(app)
	for _, c := range app.Commands {
		if c.OnUsageError == nil {
			c.OnUsageError = func(cc *cli.Context, err error, _ bool) error {
				return flagUsageErr("mcpvcr "+cc.Command.Name, append(cc.Command.Flags, app.Flags...), e.args, err)
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
	return openPath(c, "")
}

// openPath opens the cassette (.db or .jsonl) at path, or the one
// --cassette names when path is "". It must exist.
func openPath(c *cli.Context, path string) (*store.DB, error) {
	if path == "" {
		path = cassettePath(c)
	}
	db, err := store.OpenFile(c.Context, path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, failErr(fmt.Errorf("cassette %s does not exist", path),
			"record one first (mcpvcr record -- SERVER...), or name it with --cassette PATH")
	case errors.Is(err, store.ErrEmpty):
		return nil, failErr(fmt.Errorf("cassette %s is empty (0 bytes): nothing has been recorded into it", path),
			"record into it with mcpvcr record --cassette "+path)
	case err != nil:
		return nil, openErr(path, err)
	}
	noteReadOnly(c, db.ReadOnly())
	return db, nil
}

// noteReadOnly says on stderr, once, that a cassette was opened
// read-only, and why.
func noteReadOnly(c *cli.Context, why error) {
	if why != nil {
		fmt.Fprintf(c.App.ErrWriter, "mcpvcr: %v; reading it read-only\n", why)
	}
}

// openForWrite opens or creates a .db cassette. A new one may not be
// named like an export (new.jsonl): it would be a SQLite file all the
// same. The writes it drops (a frame SQLite refuses) are logged to e's
// logger.
func openForWrite(c *cli.Context, e *env) (*store.DB, error) {
	path := cassettePath(c)
	if err := cassetteName(c, path); err != nil {
		return nil, err
	}
	db, err := store.OpenWith(c.Context, path, store.Options{Logger: e.logger, ReserveIDs: c.Command.Name == "record"})
	if err != nil {
		return nil, openErr(path, err)
	}
	return db, nil
}

// exportExts are the names of what export writes, which a cassette is not.
var exportExts = []string{".jsonl", ".json", ".har", ".html", ".yaml", ".yml"}

// cassetteName refuses to create a cassette at path when its name says
// it is an export; an existing SQLite file of that name is still used.
func cassetteName(c *cli.Context, path string) error {
	ext := strings.ToLower(filepath.Ext(path))
	if !slices.Contains(exportExts, ext) {
		return nil
	}
	if f, err := store.Sniff(path); err == nil && f == store.SQLite {
		return nil
	}
	name := strings.TrimSuffix(path, filepath.Ext(path)) + ".db"
	hint := fmt.Sprintf("mcpvcr %s --cassette %s, then mcpvcr export --cassette %s -o %s", c.Command.Name, name, name, path)
	if c.Command.Name == "import" {
		hint = fmt.Sprintf("mcpvcr import %s --cassette %s", c.Args().First(), name)
	}
	return usageErr(hint, "--cassette %s: %s writes a SQLite cassette (.db), not %s; mcpvcr export makes the %s text", path, c.Command.Name, ext, ext)
}
