// Command mcpvcr records and replays Model Context Protocol sessions.
//
// See README.md or run mcpvcr --help.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/mcpvcr/mcpvcr/internal/procs"
)

// fitProcs lets an HTTP recording size the Go runtime to its load (see
// package procs). Only the program sets it: a test that calls run in its
// own process keeps its runtime as it is.
var fitProcs bool

// newFitter returns the Fitter of an HTTP recording, or nil.
func newFitter() *procs.Fitter {
	if !fitProcs {
		return nil
	}
	return procs.New()
}

func main() {
	fitProcs = true
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
