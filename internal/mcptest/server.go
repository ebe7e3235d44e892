package mcptest

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server variants accepted by [NewServer] and [ServerConfig].
const (
	// V1 is the baseline server.
	V1 = "v1"
	// V2 is "the next release" of the server, for diff tests: tool add gains
	// an optional input c (its input schema changes, its answers do not),
	// tool info reports version 2.0.0 instead of 1.0.0, and tool multiply
	// is added. Everything else is identical to V1.
	V2 = "v2"
)

// Fixed identities and contents served by the test server.
const (
	// ServerName is the serverInfo name of the test server.
	ServerName = "mcptest"
	// ServerVersion is the serverInfo version of the test server, the same
	// in both variants.
	ServerVersion = "1.0.0"
	// Instructions is the test server's instructions text.
	Instructions = "mcptest: a deterministic MCP test peer."
	// StaticURI is the URI of the static text resource.
	StaticURI = "test://static/hello"
	// StaticText is the text of the static resource.
	StaticText = "Hello, World!"
	// ItemTemplate is the URI template of the item resources.
	ItemTemplate = "test://items/{id}"
)

// DefaultSlowLimit is the longest the slow tool blocks when its request is
// never cancelled, so that a server whose transport cannot deliver the
// cancellation (a stateless legacy HTTP server) still drains.
const DefaultSlowLimit = 30 * time.Second

// ServerConfig configures a test server. The zero value is a V1 server that
// speaks every protocol version the SDK supports.
type ServerConfig struct {
	// Variant is V1 or V2. If empty, V1.
	Variant string
	// Versions restricts the protocol versions the server negotiates
	// (mcp.ServerOptions.SupportedProtocolVersions). If empty, every version
	// in [Versions].
	Versions []string
	// SlowLimit bounds how long tool slow waits for its cancellation.
	// If zero, DefaultSlowLimit.
	SlowLimit time.Duration
	// CloseStreams makes tool reconnect close its SSE stream mid-call, with
	// a retry interval, so that the client resumes with Last-Event-ID
	// (SEP-1699 polling). It needs an event store; without it the tool
	// answers the same without closing anything.
	CloseStreams bool
	// Annotated marks tool info readOnlyHint: true and adds tool forget,
	// marked destructiveHint: true, for tests of verify's write guard.
	Annotated bool
	// Stubborn adds the tools of the cancellation tests: stubborn, which
	// answers (or fails) after its cancellation, and abandon, which cancels
	// its own elicitation. They are not in the default list, which the
	// committed cassettes record.
	Stubborn bool
	// Paired adds tool pair, which answers a call only once a second call
	// of it is under way, and then both: two concurrent requests whose
	// responses come one right after the other.
	Paired bool
	// EmptyCursor ends every list (tools, prompts, resources, templates)
	// with nextCursor "" instead of leaving nextCursor out, as some
	// servers do, for the audit's pagination rules. The SDK reads a
	// cursor "" as none: asked with it, the server lists from the start
	// again, and ends that answer with nextCursor "" too.
	EmptyCursor bool
	// AnswerVersion, when set, is the protocolVersion every initialize
	// result names instead of the negotiated one (a version no revision
	// has, say), for the audit's lifecycle rule: a client must then
	// disconnect. The server itself goes on as negotiated.
	AnswerVersion string
	// Toggle adds tool toggle, which adds tool extra, or removes it when
	// present: the server then sends notifications/tools/list_changed
	// (in 2026-07-28 on each subscriptions/listen stream asking for it).
	Toggle bool
	// HeaderTool adds tool lookup, whose integer argument id is
	// annotated x-mcp-header "Id": a 2026-07-28 client mirrors it in
	// Mcp-Param-Id.
	HeaderTool bool
	// Logger receives the SDK's server logs. If nil, they are discarded.
	Logger *slog.Logger
}

// NewServer returns the test server of the given variant (V1 or V2; empty
// means V1), speaking every protocol version the SDK supports. It panics on
// an unknown variant. The server may be connected to any number of sessions.
func NewServer(variant string) *mcp.Server {
	return ServerConfig{Variant: variant}.NewServer()
}

// NewServer returns the server c describes. It panics if c.Variant or one of
// c.Versions is unknown; use [ServerConfig.Validate] first to get an error.
func (c ServerConfig) NewServer() *mcp.Server {
	if err := c.Validate(); err != nil {
		panic(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: ServerName, Version: ServerVersion}, &mcp.ServerOptions{
		Instructions:              Instructions,
		Logger:                    c.Logger,
		SupportedProtocolVersions: c.Versions,
	})
	limit := c.SlowLimit
	if limit <= 0 {
		limit = DefaultSlowLimit
	}
	addTools(s, c.variant(), limit, c.CloseStreams)
	if c.Stubborn {
		addStubborn(s, limit)
	}
	if c.Paired {
		mcp.AddTool(s, &mcp.Tool{Name: "pair", Description: "Answers once a second call of pair is under way, then both."}, pair(limit))
	}
	if c.Annotated {
		addAnnotated(s, c.variant())
	}
	if c.Toggle {
		addToggle(s)
	}
	if c.HeaderTool {
		addLookup(s)
	}
	if c.EmptyCursor {
		s.AddReceivingMiddleware(emptyCursor)
	}
	if c.AnswerVersion != "" {
		s.AddReceivingMiddleware(answerVersion(c.AnswerVersion))
	}

	addResources(s)
	addPrompts(s)
	return s
}

// Validate reports whether c names a known variant and known versions.
func (c ServerConfig) Validate() error {
	switch c.Variant {
	case "", V1, V2:
	default:
		return fmt.Errorf("unknown server variant %q (want %s or %s)", c.Variant, V1, V2)
	}
	for _, v := range c.Versions {
		if !knownVersion(v) {
			return fmt.Errorf("unknown protocol version %q (want one of %s)", v, strings.Join(Versions, ", "))
		}
	}
	return nil
}

func (c ServerConfig) variant() string {
	if c.Variant == "" {
		return V1
	}
	return c.Variant
}

func addResources(s *mcp.Server) {
	s.AddResource(&mcp.Resource{
		URI:         StaticURI,
		Name:        "hello",
		Description: "A static text resource.",
		MIMEType:    "text/plain",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: req.Params.URI, MIMEType: "text/plain", Text: StaticText},
		}}, nil
	})
	s.AddResourceTemplate(&mcp.ResourceTemplate{
		URITemplate: ItemTemplate,
		Name:        "item",
		Description: "One item, by id.",
		MIMEType:    "text/plain",
	}, func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		id := strings.TrimPrefix(req.Params.URI, "test://items/")
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{
			{URI: req.Params.URI, MIMEType: "text/plain", Text: "item " + id},
		}}, nil
	})
}

func addPrompts(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{
		Name:        "greet",
		Description: "Greets someone by name.",
		Arguments: []*mcp.PromptArgument{
			{Name: "name", Description: "Who to greet.", Required: true},
		},
	}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		name := req.Params.Arguments["name"]
		if name == "" {
			name = "stranger"
		}
		return &mcp.GetPromptResult{
			Description: "A greeting for " + name + ".",
			Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: "Hello, " + name + "!"}},
			},
		}, nil
	})
}
