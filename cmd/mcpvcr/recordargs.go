package main

import (
	"errors"
	"net/http"
	"os"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/internal/args"
)

// How record finds the server command: everything from the first
// argument that is not one of record's flags is the server's argv,
// unchanged, as env(1), timeout(1) and strace(1) do; a "--" before it is
// accepted and dropped (so "-- --" passes a literal "--"); --server or
// MCPVCR_SERVER gives it as one string, for client configs that carry
// only flags or environment.

// serverArgv returns the server command of record, or nil when there is
// none (HTTP recording).
func serverArgv(c *cli.Context) ([]string, error) {
	s := c.String("server")
	if env := os.Getenv("MCPVCR_SERVER"); s == env && c.String("upstream") != "" {
		s = "" // an MCPVCR_SERVER left in the environment: --upstream says HTTP
	}
	if c.NArg() > 0 {
		if s != "" {
			return nil, usageErr("mcpvcr record -- COMMAND, or mcpvcr record --server 'COMMAND'",
				"record got a server command both as arguments (%s) and from --server or MCPVCR_SERVER", c.Args().First())
		}
		return c.Args().Slice(), nil
	}
	if s == "" {
		return nil, nil
	}
	argv, err := args.SplitCommand(s)
	if err != nil {
		return nil, usageErr("quote like a shell: --server 'node \"my server.js\" --port 3'", "--server %q: %v", s, err)
	}
	if len(argv) == 0 {
		return nil, usageErr("--server 'COMMAND ARGS'", "--server is empty")
	}
	return argv, nil
}

// headerList is the value of --header: "Name: value" lines, kept whole
// (a value may hold commas). A value of several lines (MCPVCR_HEADER) is
// one header per line.
type headerList []string

func (h *headerList) Set(v string) error {
	for _, l := range strings.Split(v, "\n") {
		if l = strings.TrimRight(l, "\r"); strings.TrimSpace(l) != "" {
			*h = append(*h, l)
		}
	}
	return nil
}

func (h *headerList) String() string { return strings.Join(*h, "\n") }

// upstreamHeader parses --header values (or MCPVCR_HEADER, one header
// per line) into the header record adds to every upstream request.
func upstreamHeader(c *cli.Context) (http.Header, error) {
	var lines []string
	if hl, ok := c.Generic("header").(*headerList); ok && hl != nil {
		lines = append(lines, *hl...)
	}
	h, err := args.ParseHeaderLines(lines)
	var le *args.HeaderLineError
	if errors.As(err, &le) {
		// Say which header, not its value: it may be a token.
		return nil, usageErr(`--header "Authorization: Bearer TOKEN"`, "a --header or MCPVCR_HEADER line is not \"Name: value\" (it starts %q)", le.Start)
	}
	return h, err
}
