package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/bytesize"
	"github.com/mcpvcr/mcpvcr/cmd/mcpvcr/internal/graceful"
	"github.com/mcpvcr/mcpvcr/recorder"
	"github.com/mcpvcr/mcpvcr/store"
)

func recordCommand(e *env) *cli.Command {
	return &cli.Command{
		Name:      "record",
		Usage:     "record MCP sessions: run a stdio server, or proxy an HTTP one",
		ArgsUsage: "[--] SERVER_COMMAND [ARGS...]  |  --server 'COMMAND ARGS'  |  --upstream URL [--listen ADDR]",
		Description: "stdio: mcpvcr starts the server and is the server command your client runs:\n" +
			"   mcpvcr record --cassette bug.db -- npx @modelcontextprotocol/server-everything stdio\n" +
			"Everything from the first argument that is not a record flag is the server's command,\n" +
			"unchanged (like env or timeout), so the -- may be left out: mcpvcr record node --no-warnings s.js.\n" +
			"A -- before the command is dropped (-- -- passes a literal --). For configs that carry only\n" +
			"flags or environment: --server 'node s.js --port 3' or MCPVCR_SERVER (quoted like a shell).\n" +
			"Every byte is forwarded unchanged; nothing but the server's output reaches stdout.\n" +
			"The server's stderr is passed through and recorded too. Signals are forwarded to the\n" +
			"server and mcpvcr exits with the server's exit code.\n\n" +
			"HTTP: mcpvcr is a reverse proxy in front of --upstream; point the client at --listen:\n" +
			"   mcpvcr record --upstream http://127.0.0.1:3001/mcp --listen 127.0.0.1:8080\n" +
			"Streamable HTTP (JSON and SSE answers, GET streams, resumption, sessions) and the\n" +
			"2024-11-05 HTTP+SSE transport are recorded; each Mcp-Session-Id is one session.\n" +
			"Credentials (Authorization, cookies, *-Key/*-Secret/*-Token headers, headers naming Auth, Jwt,\n" +
			"Signature, Cert or Assertion, token-like query parameters, -p/--password values of the server's argv,\n" +
			"and in every frame the string values of JSON members such as password, api_key and token) are\n" +
			"stored as placeholders, never forwarded changed; replay still matches a client sending the real value.\n" +
			"OAuth-protected servers: the resource is rewritten to name the proxy and the authorization\n" +
			"server is fronted (see --proxy-auth): its answer to the authorization request is relayed\n" +
			"when it approves at once (headless clients), and a browser that must log in is sent to it.\n" +
			"A request from another\n" +
			"site (foreign Origin or Host) is refused unless --allow-origin names it. Stop with Ctrl-C:\n" +
			"it says what it waits for (at most 5s); a second Ctrl-C stops at once.",
		Flags: []cli.Flag{
			cassetteFlag(),
			&cli.StringFlag{Name: "name", Usage: "a `NAME` for the recorded session"},
			&cli.StringFlag{Name: "upstream", Usage: "record HTTP: the server's MCP endpoint (or HTTP+SSE stream) `URL`", EnvVars: []string{"MCPVCR_UPSTREAM"}},
			&cli.StringFlag{Name: "listen", Value: defaultListen, Usage: "record HTTP: the `ADDR` the proxy listens on", EnvVars: []string{"MCPVCR_LISTEN"}},
			&cli.StringSliceFlag{Name: "redact-header", Usage: "also store this `HEADER`'s values as placeholders (repeatable)", EnvVars: []string{"MCPVCR_REDACT_HEADER"}},
			&cli.StringSliceFlag{Name: "redact-json", Usage: "also store the string values of JSON members named `NAME` as placeholders, in every frame (repeatable; on top of password, secret, api_key, token, access_token, refresh_token, client_secret, authorization, private_key)", EnvVars: []string{"MCPVCR_REDACT_JSON"}},
			&cli.BoolFlag{Name: "no-redact-json", Usage: "store frames as sent: redact no JSON members (headers and URLs still are)"},
			&cli.StringSliceFlag{Name: "redact-query", Usage: "also store this query `PARAM`'s values as placeholders (repeatable)", EnvVars: []string{"MCPVCR_REDACT_QUERY"}},
			&cli.StringFlag{Name: "server", EnvVars: []string{"MCPVCR_SERVER"}, Usage: "record stdio: the server `COMMAND` as one string, quoted like a shell (for configs without an args list)"},
			&cli.GenericFlag{Name: "header", Value: &headerList{}, Usage: "record HTTP: add `\"NAME: VALUE\"` to every upstream request, such as a token you hold (repeatable; MCPVCR_HEADER: one per line); not recorded", EnvVars: []string{"MCPVCR_HEADER"}},
			&cli.StringSliceFlag{Name: "allow-origin", EnvVars: []string{"MCPVCR_ALLOW_ORIGIN"}, Usage: "record HTTP: also serve browser pages of `ORIGIN` (http://app.example:3000; * for any): by default a request whose Origin or Host is neither loopback nor the listen address is refused with 403 (DNS rebinding protection) (repeatable)"},
			&cli.GenericFlag{Name: "max-frame", Value: ptr(bytesize.Size(recorder.DefaultMaxFrame)), EnvVars: []string{"MCPVCR_MAX_FRAME"},
				Usage: "store at most `SIZE` of one frame (a line, body or SSE event; such as 64MiB, 1MB or bytes): a longer one is forwarded whole and stored cut, flagged oversize with its length"},
			&cli.DurationFlag{Name: "idle-timeout", Value: graceful.DefaultIdleTimeout, EnvVars: []string{"MCPVCR_IDLE_TIMEOUT"}, Usage: "HTTP: close a keep-alive connection after `D` without a request (headers must arrive within 10s, a request body within 30s; answers are never cut)"},
			&cli.BoolFlag{Name: "proxy-auth", Value: true, Usage: "record HTTP: front the OAuth authorization servers of a protected upstream (record their exchanges, map the token's resource to the upstream); --proxy-auth=false lets the client talk to them directly"},
		},
		Action: func(c *cli.Context) error {
			argv, err := serverArgv(c)
			if err != nil {
				return err
			}
			if c.String("upstream") != "" {
				if argv != nil {
					return usageErr("mcpvcr record --upstream URL, or mcpvcr record -- COMMAND", "record takes --upstream or a server command, not both")
				}
				return recordHTTP(c, e)
			}
			if argv == nil {
				return usageErr("mcpvcr record [--] SERVER_COMMAND [ARGS...]", "record needs the server command (or --upstream URL)")
			}
			return recordStdio(c, e, argv)
		},
	}
}

func recordStdio(c *cli.Context, e *env, argv []string) error {
	// A server command that is not there is said before the cassette is
	// made: a record that records nothing leaves no file behind.
	if _, err := exec.LookPath(argv[0]); err != nil {
		return failErr(fmt.Errorf("start server %q: %w", argv[0], err), "check the command after -- runs on its own")
	}
	// The server starts while the cassette opens: another recorder may
	// hold its write lock.
	db, err := openLazy(c, e)
	if err != nil {
		return err
	}
	defer db.Close()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	rec := &recorder.Command{
		Argv:     argv,
		Recorder: recorder.Stdio{Sink: db, Session: store.Session{Name: c.String("name")}, Stderr: e.stderr, Logger: e.logger, MaxFrame: bytesize.Of(c.Generic("max-frame"))},
		Redactor: redactor(c),
		Signals:  sigs,
	}
	// Signals are forwarded rather than cancelling the recording: the
	// server decides when the session ends.
	res, err := rec.Run(context.WithoutCancel(c.Context), e.client())
	var se *recorder.StartError
	switch {
	case errors.As(err, &se):
		return failErr(fmt.Errorf("start server %q: %w", argv[0], se.Err), "check the command after -- runs on its own")
	case err != nil:
		return failErr(fmt.Errorf("record: %w", err), "")
	}
	if cerr := db.Close(); res.Err == nil {
		res.Err = cerr // a failure found only when flushing the last frames
	}
	if err := db.OpenErr(); err != nil {
		return err // the cassette could not be opened: openErr says why
	}
	if res.Err != nil {
		return failErr(fmt.Errorf("recording failed, the session in %s is incomplete: %w", cassettePath(c), res.Err),
			"free disk space or choose another --cassette; what was recorded before the failure is kept")
	}
	if res.ExitCode != 0 {
		if sig, ok := res.Signal.(syscall.Signal); ok && res.ExitCode == 128+int(sig) {
			// The usual end of a session whose client stops its server
			// (Inspector sends SIGTERM): not a failure, but the code is
			// passed on, as the server gave it.
			return &exitError{code: res.ExitCode, err: fmt.Errorf("session %d recorded; the server stopped on %s from the client (exit code %d, passed on)",
				res.SessionID, signalName(sig), res.ExitCode)}
		}
		return &exitError{code: res.ExitCode, err: fmt.Errorf("server exited with code %d", res.ExitCode)}
	}
	return nil
}

// signalName is a signal's conventional name, such as SIGTERM.
func signalName(s syscall.Signal) string {
	switch s {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGHUP:
		return "SIGHUP"
	case syscall.SIGQUIT:
		return "SIGQUIT"
	}
	return fmt.Sprintf("signal %d", int(s))
}

// redactor builds the redaction rules from the command's flags.
func redactor(c *cli.Context) *recorder.Redactor {
	return &recorder.Redactor{Headers: c.StringSlice("redact-header"), Query: c.StringSlice("redact-query"),
		JSON: c.StringSlice("redact-json"), NoJSON: c.Bool("no-redact-json")}
}

func ptr[T any](v T) *T { return &v }
