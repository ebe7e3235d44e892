// Command chaosclient is a real MCP client (the Go SDK's) as a process,
// for mcpvcr's chaos replay tests: it connects over Streamable HTTP to
// -url, runs the chaos script -script (see mcptest.ChaosRun) as client
// -name and prints what it saw as one JSON array on stdout.
//
//	chaosclient -url http://127.0.0.1:8080/mcp -script script
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("chaosclient", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "", "the MCP endpoint `URL`")
	script := fs.String("script", "script", "the chaos script: script or run0")
	name := fs.String("name", "chaos-process-client", "the client's `NAME` in initialize")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *url == "" || !mcptest.ChaosScript(*script) {
		fmt.Fprintln(stderr, "chaosclient: need -url URL and -script script or run0")
		return 2
	}
	tr := &mcp.StreamableClientTransport{Endpoint: *url, MaxRetries: 2}
	saw := mcptest.ChaosRun(context.Background(), tr, &mcp.Implementation{Name: *name, Version: "1.0.0"}, *script)
	b, _ := json.Marshal(saw)
	fmt.Fprintf(stdout, "%s\n", b)
	return 0
}
