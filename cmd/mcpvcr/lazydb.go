package main

import (
	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/lazydb"
	"github.com/mcpvcr/mcpvcr/store"
)

// openLazy probes the cassette (so that a wrong file is refused before the
// server starts) and opens it in the background.
func openLazy(c *cli.Context, e *env) (*lazydb.DB, error) {
	path := cassettePath(c)
	if err := cassetteName(c, path); err != nil {
		return nil, err
	}
	if err := store.Probe(path); err != nil {
		return nil, openErr(path, err)
	}
	return lazydb.Open(func() (*store.DB, error) { return openForWrite(c, e) }), nil
}
