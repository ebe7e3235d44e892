// Command democlient is a real MCP client (the Go SDK's) for make demo: it
// starts a server command over stdio, runs the mcptest script against it
// (tools, resources, prompts, progress, logging, sampling, elicitation,
// roots, a cancellation) and writes what it saw as JSON, or compares it
// with an earlier run.
//
//	democlient -out live.json -- mcpvcr record -- testserver
//	democlient -compare live.json -- mcpvcr replay --stdio
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("democlient", flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("version", mcptest.V20251125, "protocol revision to ask for")
	out := fs.String("out", "", "write the transcript to `FILE`")
	compare := fs.String("compare", "", "compare the transcript with `FILE` and exit 1 if they differ")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: democlient [-version V] [-out FILE | -compare FILE] -- SERVER_COMMAND [ARGS...]")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stderr = stderr
	cs, err := mcptest.NewClient().Connect(ctx, &mcp.CommandTransport{Command: cmd}, &mcp.ClientSessionOptions{ProtocolVersion: *version})
	if err != nil {
		fmt.Fprintf(stderr, "democlient: connect: %v\n", err)
		return 3
	}
	t, err := mcptest.Script(ctx, cs)
	t.Requested = *version
	cerr := cs.Close()
	if err != nil {
		fmt.Fprintf(stderr, "democlient: %v\n", err)
		return 3
	}
	if cerr != nil {
		fmt.Fprintf(stderr, "democlient: close: %v\n", cerr)
	}
	fmt.Fprintf(stdout, "democlient: %d steps at protocol %s:", len(t.Steps), t.Negotiated)
	for _, s := range t.Steps {
		mark := ""
		switch {
		case s.Skipped != "":
			mark = " (skipped)"
		case s.Error != nil && s.Error.Cancelled:
			mark = " (cancelled)"
		case s.Error != nil:
			mark = " (error)"
		}
		fmt.Fprintf(stdout, " %s%s;", s.Name, mark)
	}
	fmt.Fprintln(stdout)
	if *out != "" {
		b, _ := json.MarshalIndent(t, "", "  ")
		if err := os.WriteFile(*out, b, 0o644); err != nil {
			fmt.Fprintf(stderr, "democlient: %v\n", err)
			return 3
		}
	}
	if *compare != "" {
		b, err := os.ReadFile(*compare)
		if err != nil {
			fmt.Fprintf(stderr, "democlient: %v\n", err)
			return 3
		}
		var want mcptest.Transcript
		if err := json.Unmarshal(b, &want); err != nil {
			fmt.Fprintf(stderr, "democlient: %s: %v\n", *compare, err)
			return 3
		}
		// Round-trip this run through JSON too, so both sides decode alike.
		var got mcptest.Transcript
		b, _ = json.Marshal(t)
		_ = json.Unmarshal(b, &got)
		if diff := cmp.Diff(want, got); diff != "" {
			fmt.Fprintf(stdout, "democlient: results differ from %s (-before +now):\n%s", *compare, diff)
			return 1
		}
		fmt.Fprintf(stdout, "democlient: every result is identical to %s\n", *compare)
	}
	return 0
}
