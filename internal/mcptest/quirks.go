package mcptest

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options of the test server for the audit's raw clients: a tool list that
// changes (ServerConfig.Toggle), a tool with an x-mcp-header argument
// (HeaderTool), lists ended with nextCursor "" (EmptyCursor) and an
// initialize answered with another version (AnswerVersion).

// addToggle adds tool toggle (ServerConfig.Toggle).
func addToggle(s *mcp.Server) {
	var mu sync.Mutex
	on := false
	mcp.AddTool(s, &mcp.Tool{Name: "toggle", Description: "Adds tool extra, or removes it when present: the tool list changes."},
		func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
			mu.Lock()
			defer mu.Unlock()
			if on {
				s.RemoveTools("extra")
				on = false
				return text("removed extra"), nil, nil
			}
			mcp.AddTool(s, &mcp.Tool{Name: "extra", Description: "Added by toggle."}, func(context.Context, *mcp.CallToolRequest, noArgs) (*mcp.CallToolResult, any, error) {
				return text("extra"), nil, nil
			})
			on = true
			return text("added extra"), nil, nil
		})
}

// addLookup adds tool lookup (ServerConfig.HeaderTool): it answers with
// its arguments.
func addLookup(s *mcp.Server) {
	s.AddTool(&mcp.Tool{
		Name:        "lookup",
		Description: "Answers with its arguments; argument id goes in header Mcp-Param-Id too.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"integer","x-mcp-header":"Id"}},"required":["id"]}`),
	}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(string(req.Params.Arguments)), nil
	})
}

// emptyCursor is the receiving middleware of ServerConfig.EmptyCursor: a
// list result without a next cursor goes out with nextCursor "".
func emptyCursor(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		var last string
		switch r := res.(type) {
		case *mcp.ListToolsResult:
			last = r.NextCursor
		case *mcp.ListPromptsResult:
			last = r.NextCursor
		case *mcp.ListResourcesResult:
			last = r.NextCursor
		case *mcp.ListResourceTemplatesResult:
			last = r.NextCursor
		default:
			return res, nil
		}
		if last != "" {
			return res, nil
		}
		v, _ := req.GetParams().GetMeta()[mcp.MetaKeyProtocolVersion].(string)
		return emptyCursorResult{res, Modern(v)}, nil
	}
}

// emptyCursorResult is a list result marshalled with nextCursor "" (and,
// in 2026-07-28, the resultType the SDK sets on the results it knows).
type emptyCursorResult struct {
	mcp.Result
	modern bool
}

func (r emptyCursorResult) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.Result)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["nextCursor"] = json.RawMessage(`""`)
	if _, ok := m["resultType"]; !ok && r.modern {
		m["resultType"] = json.RawMessage(`"complete"`)
	}
	return json.Marshal(m)
}

// answerVersion is the receiving middleware of ServerConfig.AnswerVersion:
// the initialize result names version.
func answerVersion(version string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.InitializeResult); ok && err == nil {
				answered := *r
				answered.ProtocolVersion = version
				return &answered, nil
			}
			return res, err
		}
	}
}
