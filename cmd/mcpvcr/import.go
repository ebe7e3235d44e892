package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime/debug"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

func importCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "import",
		Usage:     "add sessions from a JSONL export to a cassette",
		ArgsUsage: "FILE",
		Description: "Reads FILE, a JSONL export (mcpvcr export writes one, as do the cassettes/ of this\n" +
			"repository), and adds each session in it to the cassette as a new session, with a new\n" +
			"number, printed once imported. The import is all or nothing: a damaged FILE adds nothing.\n" +
			"The cassette is made if it does not exist.\n" +
			"   mcpvcr import bug.jsonl --cassette bug.db && mcpvcr ls --cassette bug.db",
		Flags: []cli.Flag{cassetteFlag()},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return usageErr("mcpvcr import FILE.jsonl", "import takes one FILE, got %d arguments", c.NArg())
			}
			path := c.Args().First()
			f, err := os.Open(path)
			if err != nil {
				return failErr(fmt.Errorf("open %s: %w", path, err), "")
			}
			defer f.Close()
			// An export of no sessions imports nothing: say so, and make
			// no cassette for it.
			if n, err := store.CountSessions(f); err == nil && n == 0 {
				fmt.Fprintf(e.stderr, "mcpvcr: %s holds no sessions; nothing was imported\n", path)
				return nil
			}
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return failErr(fmt.Errorf("read %s: %w", path, err), "")
			}
			_, statErr := os.Stat(cassettePath(c))
			db, err := openForWrite(c, e)
			if err != nil {
				return err
			}
			defer db.Close()
			ids, err := db.Import(c.Context, f) // a file: Import measures a long line before it reads it
			if err != nil {
				if errors.Is(statErr, fs.ErrNotExist) {
					removeEmpty(c, db, cassettePath(c)) // made for this import: nothing to keep
				}
				hint := "check the file is an mcpvcr export (mcpvcr export writes one); nothing was imported"
				if errors.As(err, new(*store.LineError)) {
					hint = "nothing was imported: mcpvcr check " + path + " names each line that does not import; fix them (the file is text), or export the session again from its cassette"
				}
				return failErr(fmt.Errorf("import %s: %w", path, err), hint)
			}
			// What reading the file took (a huge frame's line) goes back
			// to the system before indexing takes its own (the frame
			// read back): the peak is then the larger of the two, not
			// their sum.
			debug.FreeOSMemory()
			if err := replayer.Index(c.Context, db, e.logger, ids...); err != nil {
				return failErr(fmt.Errorf("index %s for replay: %w", cassettePath(c), err), "")
			}
			if err := db.Close(); err != nil {
				return failErr(fmt.Errorf("save %s: %w", cassettePath(c), err), "")
			}
			for _, id := range ids {
				fmt.Fprintf(e.stdout, "imported session %d\n", id)
			}
			return nil
		},
	}
}

// removeEmpty closes db, the cassette at path, and removes it when it
// holds no session.
func removeEmpty(c *cli.Context, db *store.DB, path string) {
	ss, err := db.Sessions(c.Context)
	if db.Close() != nil || err != nil || len(ss) > 0 {
		return
	}
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		os.Remove(path + suffix)
	}
}
