package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/textproto"
	"os"
	"strings"

	"github.com/urfave/cli/v2"
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
	argv, err := splitCommand(s)
	if err != nil {
		return nil, usageErr("quote like a shell: --server 'node \"my server.js\" --port 3'", "--server %q: %v", s, err)
	}
	if len(argv) == 0 {
		return nil, usageErr("--server 'COMMAND ARGS'", "--server is empty")
	}
	return argv, nil
}

// splitCommand splits a command line into words as a POSIX shell does
// for quoting: single quotes keep everything, double quotes keep
// everything but backslash escapes of \ " $ `, and a backslash outside
// quotes escapes the next character. Nothing is expanded.
func splitCommand(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word
	)
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch == ' ' || ch == '\t' || ch == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		case ch == '\\':
			if i+1 >= len(s) {
				return nil, errors.New("a backslash ends the command")
			}
			i++
			cur.WriteByte(s[i])
			in = true
		case ch == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, errors.New("a single quote is not closed")
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
			in = true
		case ch == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\\\"$`", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, errors.New("a double quote is not closed")
			}
			in = true
		default:
			cur.WriteByte(ch)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
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
	if len(lines) == 0 {
		return nil, nil
	}
	h := http.Header{}
	for _, l := range lines {
		name, value, ok := strings.Cut(l, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			// Say which header, not its value: it may be a token.
			return nil, usageErr(`--header "Authorization: Bearer TOKEN"`, "a --header or MCPVCR_HEADER line is not \"Name: value\" (it starts %q)", firstWord(l))
		}
		h.Add(textproto.CanonicalMIMEHeaderKey(name), strings.TrimSpace(value))
	}
	return h, nil
}

// firstWord is the first word of s, at most 20 bytes: enough to name a
// line without showing a token in it.
func firstWord(s string) string {
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	if len(f[0]) > 20 {
		return fmt.Sprintf("%s…", f[0][:20])
	}
	return f[0]
}
