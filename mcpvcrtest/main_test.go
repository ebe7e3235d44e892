package mcpvcrtest_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/mcpvcrtest"
)

// TestMain lets Command start this test binary as the replayed server.
func TestMain(m *testing.M) { mcpvcrtest.Main(m) }

// Cassettes of eight runs of the same Go SDK client script against the
// mcptest server, which share their opening frames (initialize,
// tools/list) and differ in their tools/call: run N echoes "run N".
const (
	httpJSONCassette = "../cassettes/multi-gosdk-http-json.jsonl"
	httpSSECassette  = "../cassettes/multi-gosdk-http-sse.jsonl"
	stdioCassette    = "../cassettes/multi-gosdk-stdio.jsonl"
	modernCassette   = "../cassettes/multi-gosdk-http-2026-07-28.jsonl"
	// The same runs over stdio at 2026-07-28, and over the 2024-11-05
	// HTTP+SSE transport.
	modernStdioCassette = "../cassettes/multi-gosdk-stdio-2026-07-28.jsonl"
	legacySSECassette   = "../cassettes/multi-gosdk-sse.jsonl"
)

// newClient is a client whose clientInfo differs from the recording's
// (mcpvcr-suite 2.12.0) and whose capabilities are the same: sampling,
// elicitation and roots.
func newClient() *mcp.Client {
	return mcp.NewClient(&mcp.Implementation{Name: "unit-test-client", Version: "0.0.1"}, &mcp.ClientOptions{
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Model: "none", Role: "assistant", Content: &mcp.TextContent{Text: "no"}}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		},
	})
}
