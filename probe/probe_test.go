package probe

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

const modern, legacyRev = mcptest.V20260728, mcptest.V20251125

// TestHeaderMismatch: a raw client that retries the call at once after
// -32020 fails; one that lists tools again, then retries once, passes.
func TestHeaderMismatch(t *testing.T) {
	recs := recorded(t, modern)
	for _, keep := range []bool{false, true} {
		res, report := replay(t, recs, []Kind{HeaderMismatch}, func(url string) {
			c := newRaw(t, url, recs)
			c.start()
			c.send("tools/list", nil)
			if st, _ := c.send("tools/call", nil); st != http.StatusBadRequest {
				t.Errorf("the probed call was answered %d; want 400", st)
			}
			if keep {
				c.send("tools/list", nil)
			}
			c.send("tools/call", nil)
			c.send("prompts/list", nil)
		})
		r := one(t, res, report)
		if want := map[bool]Verdict{false: VerdictFail, true: VerdictPass}[keep]; r.Verdict != want {
			t.Errorf("keep=%v: verdict %s (%s); want %s", keep, r.Verdict, r.Did, want)
		}
	}
}

// TestHeaderMismatchRetriedTwice: a client that retries twice fails.
func TestHeaderMismatchRetriedTwice(t *testing.T) {
	recs := recorded(t, modern)
	res, report := replay(t, recs, []Kind{HeaderMismatch}, func(url string) {
		c := newRaw(t, url, recs)
		c.start()
		c.send("tools/call", nil)
		c.send("tools/list", nil)
		c.send("tools/call", nil)
		c.send("tools/call", nil)
	})
	if r := one(t, res, report); r.Verdict != VerdictFail {
		t.Errorf("verdict %s (%s); want fail", r.Verdict, r.Did)
	}
}

// cursorEdit sets the cursor of a list request.
func cursorEdit(c string) func(map[string]any) { return func(p map[string]any) { p["cursor"] = c } }

// TestEmptyCursor: in 2026-07-28 asking again with cursor "" passes and
// taking the list as ended fails; before 2026-07-28 the other way round.
func TestEmptyCursor(t *testing.T) {
	for _, version := range []string{modern, legacyRev} {
		recs := recorded(t, version)
		for _, ask := range []bool{false, true} {
			res, report := replay(t, recs, []Kind{EmptyCursor}, func(url string) {
				c := newRaw(t, url, recs)
				c.start()
				_, m := c.send("tools/list", nil)
				if res := string(m["result"]); !containsCursor(res, `""`) {
					t.Errorf("%s: the first page %s has no nextCursor \"\"", version, res)
				}
				if ask {
					if _, m := c.send("tools/list", cursorEdit("")); m["result"] == nil || containsCursor(string(m["result"]), "") {
						t.Errorf(`%s: the page asked for with cursor "" was answered %v; want the recorded result without nextCursor`, version, m)
					}
				}
				c.send("tools/call", nil)
			})
			r := one(t, res, report)
			want := VerdictFail
			if ask == mcptest.Modern(version) {
				want = VerdictPass
			}
			if r.Verdict != want {
				t.Errorf("%s ask=%v: verdict %s (%s); want %s", version, ask, r.Verdict, r.Did, want)
			}
		}
	}
}

// containsCursor reports whether the result JSON res has nextCursor
// (with value v when v is not empty).
func containsCursor(res, v string) bool {
	raw, ok := member([]byte(res), "nextCursor")
	return ok && (v == "" || string(raw) == v)
}

// TestRepeatedCursor: a client that sends the repeated cursor again
// fails; one that stops passes.
func TestRepeatedCursor(t *testing.T) {
	for _, version := range []string{modern, legacyRev} {
		recs := recorded(t, version)
		for _, loop := range []bool{false, true} {
			res, report := replay(t, recs, []Kind{RepeatedCursor}, func(url string) {
				c := newRaw(t, url, recs)
				c.start()
				c.send("tools/list", nil)
				_, m := c.send("tools/list", cursorEdit(repeatCursor))
				if !containsCursor(string(m["result"]), `"`+repeatCursor+`"`) {
					t.Errorf("%s: the second page %s does not repeat the cursor", version, m["result"])
				}
				if loop {
					c.send("tools/list", cursorEdit(repeatCursor))
				}
				c.send("tools/call", nil)
			})
			r := one(t, res, report)
			if want := map[bool]Verdict{false: VerdictPass, true: VerdictFail}[loop]; r.Verdict != want {
				t.Errorf("%s loop=%v: verdict %s (%s); want %s", version, loop, r.Verdict, r.Did, want)
			}
		}
	}
}

// TestSession404: a raw client that uses the old session id again fails;
// one that initializes anew and sends the call again passes.
func TestSession404(t *testing.T) {
	recs := recorded(t, legacyRev)
	for _, keep := range []bool{false, true} {
		res, report := replay(t, recs, []Kind{Session404}, func(url string) {
			c := newRaw(t, url, recs)
			c.start()
			c.send("tools/list", nil)
			if st, _ := c.send("tools/call", nil); st != http.StatusNotFound {
				t.Errorf("the probed call was answered %d; want 404", st)
			}
			if keep {
				c.start()
				c.send("tools/list", nil) // as recorded: the call follows the list
			}
			if st, _ := c.send("tools/call", nil); keep && st != http.StatusOK {
				t.Errorf("the call in the new session was answered %d; want 200", st)
			}
		})
		r := one(t, res, report)
		if want := map[bool]Verdict{false: VerdictFail, true: VerdictPass}[keep]; r.Verdict != want {
			t.Errorf("keep=%v: verdict %s (%s); want %s", keep, r.Verdict, r.Did, want)
		}
	}
}

// TestStringID: a raw client that answers the server request with the
// id as a number fails; one that echoes the string passes; both get the
// call's result (the answer goes on to replay with the recorded id, or
// matches it as it is).
func TestStringID(t *testing.T) {
	recs := recorded(t, legacyRev)
	for _, asSent := range []bool{false, true} {
		res, report := replay(t, recs, []Kind{StringID}, func(url string) {
			c := newRaw(t, url, recs)
			c.start()
			c.send("tools/list", nil)
			id, ok := c.callRoots(asSent)
			if !ok || len(id) < 2 || id[0] != '"' {
				t.Errorf("asSent=%v: the server request came with id %s, the call's result: %v; want a string id and the result", asSent, id, ok)
			}
		})
		r := one(t, res, report)
		if want := map[bool]Verdict{false: VerdictFail, true: VerdictPass}[asSent]; r.Verdict != want {
			t.Errorf("asSent=%v: verdict %s (%s); want %s", asSent, r.Verdict, r.Did, want)
		}
	}
}

// TestVersionRetry: after -32022 a raw client that retries once with the
// version data.supported names passes; one that asks for a version not
// named, or the same one a third time, fails.
func TestVersionRetry(t *testing.T) {
	recs := recorded(t, modern)
	asking := func(v string) func(map[string]any) {
		return func(p map[string]any) {
			meta, _ := p["_meta"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			meta["io.modelcontextprotocol/protocolVersion"] = v
			p["_meta"] = meta
		}
	}
	for _, tc := range []struct {
		name    string
		retries []string
		want    Verdict
	}{
		{"once", []string{modern}, VerdictPass},
		{"unnamed", []string{"2099-01-01"}, VerdictFail},
		{"loop", []string{modern, modern}, VerdictFail},
	} {
		res, report := replay(t, recs, []Kind{VersionRetry}, func(url string) {
			c := newRaw(t, url, recs)
			if st, m := c.send("server/discover", nil); st != http.StatusBadRequest || !strings.Contains(string(m["error"]), "-32022") {
				t.Errorf("%s: the first discover was answered %d %s; want 400 and -32022", tc.name, st, m["error"])
			}
			for _, v := range tc.retries {
				c.send("server/discover", asking(v))
			}
			c.send("tools/list", nil)
		})
		if r := one(t, res, report); r.Verdict != tc.want {
			t.Errorf("%s: verdict %s (%s); want %s", tc.name, r.Verdict, r.Did, tc.want)
		}
	}
}

// TestSameRunSameProbes: every kind asked for, the Go SDK client run
// twice on the same 2025-11-25 recording: the same probes at the same
// requests with the same verdicts, and the kinds with no place reported
// as not placed, with where they could go.
func TestSameRunSameProbes(t *testing.T) {
	recs := recorded(t, legacyRev)
	var first []string
	for run := range 2 {
		res, report := replay(t, recs, nil, func(url string) { goSDK(t.Context(), t, url, legacyRev) })
		var got []string
		for _, r := range res {
			got = append(got, r.Kind.String()+" at "+r.Request+": "+r.What+"; "+r.Did+": "+r.Verdict.String())
		}
		if run == 0 {
			first = got
			// The session is gone after session-404: its roots call
			// (string-id's place) never comes, nor a second list.
			for _, want := range []string{"probe: not placed: header-mismatch (" + where[HeaderMismatch] + ")", "probe: not placed: version-retry",
				"probe: not placed: repeated-cursor", "probe: not placed: string-id"} {
				if !strings.Contains(report, want) {
					t.Errorf("the report lacks %q:\n%s", want, report)
				}
			}
			if len(got) != 2 || !strings.HasPrefix(got[0], "empty-cursor") || !strings.HasPrefix(got[1], "session-404") {
				t.Errorf("probes placed: %q; want empty-cursor, then session-404", got)
			}
			continue
		}
		if strings.Join(got, "\n") != strings.Join(first, "\n") {
			t.Errorf("the second run placed\n%s\nthe first\n%s", strings.Join(got, "\n"), strings.Join(first, "\n"))
		}
	}
}

// goSDK runs the Go SDK v1.8.0 client at version against the replay at
// url: it lists tools page by page (the SDK's iterator follows
// nextCursor), calls echo once and closes. What it does after a probe is
// the SDK's own doing: this caller adds nothing.
func goSDK(ctx context.Context, t *testing.T, url, version string) {
	goSDKWith(ctx, t, url, version, nil, false)
}

// goSDKWith is goSDK with the client's options changed by edit (nil:
// none) and, when then is set, a prompts/list after the calls: a caller
// that goes on after an error.
func goSDKWith(ctx context.Context, t *testing.T, url, version string, edit func(*mcp.ClientOptions), then bool) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	client := mcptest.NewClientWith(&mcp.Implementation{Name: mcptest.ClientName, Version: mcptest.ClientVersion}, edit)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Logf("connect: %v", err)
		return
	}
	defer cs.Close()
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Logf("tools: %v", err)
			break
		}
		if n++; n > 50 {
			break
		}
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}}); err != nil {
		t.Logf("echo: %v", err)
	}
	if !mcptest.Modern(version) {
		if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "roots", Arguments: map[string]any{}}); err != nil {
			t.Logf("roots: %v", err)
		}
	}
	if then {
		if _, err := cs.ListPrompts(ctx, nil); err != nil {
			t.Logf("prompts: %v", err)
		}
	}
}

// TestGoSDK: the Go SDK v1.8.0 client under each probe, on a fresh
// recording of its own; the verdicts are what it does, as docs/probes.md
// reports them (goSDKCases).
func TestGoSDK(t *testing.T) {
	for _, tc := range goSDKCases {
		t.Run(tc.kind.String()+"/"+tc.version, func(t *testing.T) {
			recs, edit := recorded(t, tc.version), func(*mcp.ClientOptions) {}
			if tc.listen {
				recs, edit = listening(t), listenOpts
			}
			res, report := replay(t, recs, []Kind{tc.kind}, func(url string) { goSDKWith(t.Context(), t, url, tc.version, edit, tc.then) })
			r := one(t, res, report)
			if r.Verdict != tc.want {
				t.Errorf("the Go SDK client: %s (%s); want %s as docs/probes.md says", r.Verdict, r.Did, tc.want)
			}
		})
	}
}
