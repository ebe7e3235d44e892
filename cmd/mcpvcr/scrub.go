package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/internal/outfile"
	"github.com/mcpvcr/mcpvcr/internal/termtext"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/scrub"
	"github.com/mcpvcr/mcpvcr/store"
)

func scrubCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "scrub",
		Usage:     "write a copy of a cassette that is safe to share",
		ArgsUsage: "[CASSETTE] -o OUT",
		Description: "Writes a copy of every session with what may identify you or open your accounts replaced\n" +
			"by stable placeholders (the same value, the same placeholder): credential headers and URL\n" +
			"parameters, secret JSON members (password, secret, api_key, token, access_token, refresh_token,\n" +
			"client_secret, authorization, private_key, passphrase, passwd, pin, credential, and\n" +
			"--redact-json names), credential flags of the server's command line (-p VALUE, --password=),\n" +
			"and in every string, UTF-8 or not: credentials of the formats secret scanners know (AWS key\n" +
			"ids and secret keys, Slack, GitHub, Google and Stripe keys, JWTs, PEM private key bodies,\n" +
			"OAuth code= values, the value after password:, passphrase=, pin:, token=, secret:), e-mail\n" +
			"addresses, home directories' user names (/home/NAME, /Users/NAME, C:\\Users\\NAME) and long\n" +
			"random-looking tokens. It prints how many of each kind it replaced, never the values, and\n" +
			"how many values it left that may still be secret: short random-looking runs (12 to 23\n" +
			"characters), UUIDs, numbers of 9 digits or more, secret-named members that are not strings.\n" +
			"The copy still replays to the client that recorded it and passes mcpvcr check. JSON-RPC ids,\n" +
			"progress tokens, SSE event ids and session ids are kept. OUT ending in .jsonl is written as\n" +
			"JSONL text, anything else as a .db cassette (0600); OUT may not be the input.\n\n" +
			"   mcpvcr scrub bug.db -o bug-shared.db",
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: "write the copy to `FILE` (.db, or .jsonl for text)"},
			&cli.StringSliceFlag{Name: "redact-json", Usage: "also replace the string values of JSON members named `NAME` (repeatable)"},
		},
		Action: func(c *cli.Context) error {
			path, ids, err := positional(c, 0)
			if err != nil {
				return err
			}
			_ = ids
			out := c.String("output")
			if out == "" {
				return usageErr("mcpvcr scrub bug.db -o bug-shared.db", "scrub needs -o OUT, the copy to write")
			}
			if path == "" {
				path = cassettePath(c)
			}
			if errors.Is(outfile.Check(out, path), outfile.ErrInput) {
				return usageErr("mcpvcr scrub "+path+" -o "+path+".scrubbed.db", "-o %s is the cassette scrub reads; write the copy elsewhere", out)
			}
			in, err := openPath(c, path)
			if err != nil {
				return err
			}
			defer in.Close()
			rep, err := scrubTo(c, e, in, path, out)
			if err != nil {
				return err
			}
			var parts []string
			for _, k := range scrub.Kinds() {
				parts = append(parts, fmt.Sprintf("%s %d", k, rep.Counts[k]))
			}
			fmt.Fprintf(e.stdout, "scrubbed %s into %s; replaced: %s\n", termtext.Count(rep.Sessions, "session"), out, strings.Join(parts, ", "))
			parts = parts[:0]
			for _, k := range scrub.LeftKinds() {
				parts = append(parts, fmt.Sprintf("%s %d", k, rep.Left[k]))
			}
			fmt.Fprintf(e.stdout, "left unrecognised (check them before sharing): %s\n", strings.Join(parts, ", "))
			return nil
		},
	}
}

// scrubTo writes the scrubbed copy of in, the cassette at path, to out:
// into a temporary file in out's folder, renamed to out once it is whole.
func scrubTo(c *cli.Context, e *env, in *store.DB, path, out string) (scrub.Report, error) {
	dir := filepath.Dir(out)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(out)+".scrub-*")
	if err != nil {
		return scrub.Report{}, failErr(fmt.Errorf("create a file next to %s: %w", out, err), "check that the folder of -o exists and is writable")
	}
	tmpDB := tmp.Name()
	tmp.Close()
	os.Remove(tmpDB) // store.Open creates it afresh
	cleanup := func(p string) {
		for _, s := range []string{"", "-wal", "-shm", "-journal"} {
			os.Remove(p + s)
		}
	}
	defer cleanup(tmpDB)
	db, err := store.Open(c.Context, tmpDB)
	if err != nil {
		return scrub.Report{}, failErr(fmt.Errorf("create %s: %w", tmpDB, err), "")
	}
	defer db.Close()
	rep, err := scrub.Cassette(c.Context, in, db, scrub.Options{Redactor: &recorder.Redactor{JSON: c.StringSlice("redact-json")}})
	if errors.Is(err, store.ErrDamagedPack) {
		jsonl, _ := rescuePaths(path)
		return rep, failErr(fmt.Errorf("scrub: %w", err), "nothing was written to "+out+"; scrub what can still be read: mcpvcr export --rescue --cassette "+
			path+" -o "+jsonl+", then mcpvcr scrub --cassette "+jsonl+" -o "+out)
	} else if err != nil {
		return rep, failErr(fmt.Errorf("scrub: %w", err), "mcpvcr check the cassette; nothing was written to "+out)
	}
	if strings.HasSuffix(out, ".jsonl") {
		return rep, writeJSONL(c, db, out)
	}
	if err := replayer.Index(c.Context, db, e.logger); err != nil {
		return rep, failErr(fmt.Errorf("index %s for replay: %w", out, err), "")
	}
	if err := db.Close(); err != nil {
		return rep, failErr(fmt.Errorf("save %s: %w", out, err), "")
	}
	if err := os.Chmod(tmpDB, 0o600); err != nil {
		return rep, failErr(err, "")
	}
	if err := os.Rename(tmpDB, out); err != nil {
		return rep, failErr(fmt.Errorf("write %s: %w", out, err), "")
	}
	return rep, nil
}

// writeJSONL exports db to out, written whole or not at all.
func writeJSONL(c *cli.Context, db *store.DB, out string) error {
	f, err := createOutput(out, "")
	if err != nil {
		return err
	}
	defer f.Abort()
	w := bufio.NewWriter(f)
	err = db.Export(c.Context, w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = f.Commit()
	}
	if err != nil {
		return failErr(fmt.Errorf("write %s: %w", out, err), "")
	}
	return nil
}
