package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// A client's answer to a server request is a client frame like any other
// (issue #46 item 4): replay compares it with the recorded answer under
// the same rules, reports it when it differs and exits 1, and goes on as
// recorded, so the client gets the recorded results of its calls.

// answersPeer is a real server whose tools make it ask the client
// something: elicitation, sampling and roots, each through one tool.
type answersPeer struct {
	name string
	argv func(testing.TB) []string
	// rootsFirst: the server asks for the roots on its own after
	// initialize (server-everything, 350 ms after), and the client
	// answers that before its calls, for a steadier recording.
	rootsFirst            bool
	elicit, sample, roots string
	sampleArgs            map[string]any
}

var answersPeers = []answersPeer{
	{
		name:       "everything",
		argv:       mcptest.Everything,
		rootsFirst: true,
		elicit:     "trigger-elicitation-request",
		sample:     "trigger-sampling-request",
		sampleArgs: map[string]any{"prompt": "hi", "maxTokens": 10},
		roots:      "get-roots-list",
	},
	{
		name:       "gosdk",
		argv:       func(tb testing.TB) []string { return []string{mcptest.BuildServer(tb)} },
		elicit:     "elicit",
		sample:     "sample",
		sampleArgs: map[string]any{"prompt": "hi"},
		roots:      "roots",
	},
}

// deviant is a client that answers one kind of server request otherwise
// than the recording client did.
type deviant struct {
	kind   string // "elicitation", "sampling", "roots"
	method string // the server request it answers otherwise
	// want is what the report says of each such answer.
	want string
}

var deviants = []deviant{
	// The Go SDK client fills in the schema's defaults: the recorded
	// content holds more than mcptest.ElicitContent with server-everything.
	{"elicitation", "elicitation/create", `answer to elicitation/create differs at result.action: "decline" (recorded "accept"), result.content: (absent) (recorded {"`},
	{"sampling", "sampling/createMessage", `answer to sampling/createMessage differs at result.content.text: "another text" (recorded "sampled: `},
	{"roots", "roots/list", `answer to roots/list differs at result.roots[0].uri: "file:///elsewhere" (recorded "file:///mcptest/alpha")`},
}

// answersClient is a Go SDK client named name that answers as
// mcptest.NewClient does, except for the kind of server request dev
// names ("" for none): it declines elicitation, samples "another text",
// or reports another first root.
func answersClient(name, dev string) *mcp.Client {
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0.0"}, &mcp.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			var prompt string
			for _, m := range req.Params.Messages {
				if t, ok := m.Content.(*mcp.TextContent); ok && m.Role == "user" {
					prompt = t.Text
				}
			}
			text := mcptest.SamplePrefix + prompt
			if dev == "sampling" {
				text = "another text"
			}
			return &mcp.CreateMessageResult{Role: "assistant", Model: mcptest.SampleModel, Content: &mcp.TextContent{Text: text}, StopReason: "endTurn"}, nil
		},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			if dev == "elicitation" {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			content := map[string]any{}
			for k, v := range mcptest.ElicitContent {
				content[k] = v
			}
			return &mcp.ElicitResult{Action: "accept", Content: content}, nil
		},
	})
	roots := mcptest.Roots
	if dev == "roots" {
		roots = []*mcp.Root{{URI: "file:///elsewhere", Name: "alpha"}, mcptest.Roots[1]}
	}
	c.AddRoots(roots...)
	return c
}

// answersScript connects c over transport, calls the peer's three tools
// and returns their results as JSON values. The error of closing the
// session is returned (server-everything does not exit on EOF: closing
// it through mcpvcr record reports the SIGTERM).
func answersScript(ctx context.Context, tb testing.TB, c *mcp.Client, p answersPeer, transport mcp.Transport) (map[string]any, error) {
	tb.Helper()
	rooted := make(chan struct{})
	var once sync.Once
	c.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "roots/list" {
				once.Do(func() { close(rooted) })
			}
			return res, err
		}
	})
	cs, err := c.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: mcptest.V20251125})
	if err != nil {
		tb.Fatalf("connect: %v", err)
	}
	if p.rootsFirst {
		select {
		case <-rooted:
		case <-ctx.Done():
			tb.Fatalf("the server did not ask for the roots after initialize: %v", ctx.Err())
		}
	}
	out := map[string]any{}
	for _, call := range []struct {
		name string
		args map[string]any
	}{{p.elicit, map[string]any{}}, {p.sample, p.sampleArgs}, {p.roots, map[string]any{}}} {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.name, Arguments: call.args})
		if err != nil {
			out[call.name] = "error: " + err.Error()
			continue
		}
		b, _ := json.Marshal(r)
		var v any
		_ = json.Unmarshal(b, &v)
		out[call.name] = v
	}
	return out, cs.Close()
}

// unmatchedCount reads the count of unmatched frames from a replay
// summary line.
var unmatchedCount = regexp.MustCompile(`(?m)^replayed session \d+: .*, (\d+) unmatched`)

// TestStdio_ClientAnswers records each peer over stdio with a client that
// accepts the elicitation, samples and reports its roots, then replays:
// the same client under another name matches everything; a client that
// declines the elicitation, samples another text or reports other roots
// gets the recorded results all the same, and the replay reports each of
// its differing answers, naming the path and both values, and exits 1,
// under tolerant and exact matching alike; a rule the user writes
// (--ignore) loosens it.
func TestStdio_ClientAnswers(t *testing.T) {
	parallel(t)
	for _, p := range answersPeers {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			argv := p.argv(t)
			ctx := testCtx(t)
			db := filepath.Join(t.TempDir(), "c.db")
			dumpOnFailure(t, db)
			rec := exec.Command(mcpvcrBin, append([]string{"record", "--cassette", db, "--"}, argv...)...)
			var recErr syncBuffer
			rec.Stderr = &recErr
			live, err := answersScript(ctx, t, answersClient("recorder", ""), p, &mcp.CommandTransport{Command: rec, TerminateDuration: time.Second})
			if err != nil && p.name != "everything" {
				t.Fatalf("close the recorded session: %v\n%s", err, recErr.String())
			}
			for name, v := range live {
				if s, ok := v.(string); ok {
					t.Fatalf("live %s: %s\n%s", name, s, recErr.String())
				}
			}

			replay := func(t *testing.T, c *mcp.Client, flags ...string) (map[string]any, int, string) {
				t.Helper()
				var repErr syncBuffer
				rep := exec.Command(mcpvcrBin, append([]string{"replay", "1", "--stdio", "--cassette", db}, flags...)...)
				rep.Stderr = &repErr
				got, err := answersScript(ctx, t, c, p, &mcp.CommandTransport{Command: rep})
				if err != nil && rep.ProcessState == nil {
					t.Fatalf("close the replay session: %v\n%s", err, repErr.String())
				}
				return got, rep.ProcessState.ExitCode(), repErr.String()
			}

			t.Run("same", func(t *testing.T) {
				got, code, stderr := replay(t, answersClient("another-name", ""))
				if diff := cmp.Diff(live, got); diff != "" {
					t.Errorf("replay differs from the live server (-live +replay):\n%s\n%s", diff, stderr)
				}
				if code != 0 || !strings.Contains(stderr, " 0 unmatched") {
					t.Errorf("replay to the recorded client's answers exited %d; want 0 and 0 unmatched:\n%s", code, stderr)
				}
			})
			for _, dev := range deviants {
				for _, mode := range [][]string{nil, {"--match", "exact"}} {
					t.Run(dev.kind+strings.Join(mode, ""), func(t *testing.T) {
						got, code, stderr := replay(t, answersClient("recorder", dev.kind), mode...)
						if diff := cmp.Diff(live, got); diff != "" {
							t.Errorf("the client did not get the recorded results (-live +replay):\n%s\n%s", diff, stderr)
						}
						if code != 1 {
							t.Errorf("replay exited %d; want 1 for the differing answer:\n%s", code, stderr)
						}
						// Each unmatched frame is an answer of this kind,
						// said as want; there is at least one.
						var unmatched []string
						for _, l := range strings.Split(stderr, "\n") {
							if strings.HasPrefix(l, "  unmatched ") {
								unmatched = append(unmatched, l)
							}
						}
						if len(unmatched) == 0 {
							t.Fatalf("no unmatched frame reported:\n%s", stderr)
						}
						for _, l := range unmatched {
							if !strings.Contains(l, "unmatched result: "+dev.want) {
								t.Errorf("unmatched line %q; want it to say %q", l, dev.want)
							}
						}
						m := unmatchedCount.FindStringSubmatch(stderr)
						if m == nil || m[1] != fmt.Sprint(len(unmatched)) {
							t.Errorf("summary counts %v unmatched; want %d:\n%s", m, len(unmatched), stderr)
						}
					})
				}
			}
			t.Run("ignored", func(t *testing.T) {
				got, code, stderr := replay(t, answersClient("another-name", "elicitation"),
					"--ignore", "elicitation/create:result.action", "--ignore", "elicitation/create:result.content")
				if diff := cmp.Diff(live, got); diff != "" {
					t.Errorf("replay differs from the live server (-live +replay):\n%s\n%s", diff, stderr)
				}
				if code != 0 || !strings.Contains(stderr, " 0 unmatched") {
					t.Errorf("replay with --ignore of the differing paths exited %d; want 0 and 0 unmatched:\n%s", code, stderr)
				}
			})
		})
	}
}
