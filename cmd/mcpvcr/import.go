package main

import (
	"bufio"
	"fmt"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/replayer"
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
			db, err := openForWrite(c)
			if err != nil {
				return err
			}
			defer db.Close()
			ids, err := db.Import(c.Context, bufio.NewReader(f))
			if err != nil {
				return failErr(fmt.Errorf("import %s: %w", path, err), "check the file is an mcpvcr export (mcpvcr export writes one); nothing was imported")
			}
			// The replay index, so that the first replay starts as fast
			// as any (it would build what is missing itself).
			if _, err := replayer.NewSource(c.Context, db, e.logger, ids...); err != nil {
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
