package scrub_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpvcr/mcpvcr/scrub"
	"github.com/mcpvcr/mcpvcr/store"
)

// hostileSecrets are the values issue #48 found left in a scrubbed copy,
// each as a stranger's cassette may hold it, and the kind scrub reports.
var hostileSecrets = []struct{ kind, value, context string }{
	{"aws-access-key-id", "AKIAIOSFODNN7EXAMPLE", "key id AKIAIOSFODNN7EXAMPLE in use"},
	{"aws-secret-key", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n"},
	{"slack-token", "xoxb-1234-abcd", "posting with xoxb-1234-abcd now"},
	{"private-key", "MIIEowIBAAKCAQEA7bq\nq9Yx4mVwz0RtPd+Qk2", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq\nq9Yx4mVwz0RtPd+Qk2\n-----END RSA PRIVATE KEY-----\n"},
	{"oauth-code", "SplxlOBeZQQYbYS6WxSbIA", "redirected to http://127.0.0.1:3334/cb?code=SplxlOBeZQQYbYS6WxSbIA&state=xyz"},
	{"keyword-secret", "hunter2", "your new password: hunter2"},
	{"keyword-secret", "correct-horse", "passphrase=correct-horse"},
	{"keyword-secret", "q8z2m4x7c1v9b3n5k6j0h2g4", "token=q8z2m4x7c1v9b3n5k6j0h2g4"},
	{"keyword-secret", "4821", "PIN: 4821"},
	{"github-token", "ghp_R2d2C3poBb8AaKk9Zz1Yy0Xx7Ww6Vv5Uu4", "cloned with ghp_R2d2C3poBb8AaKk9Zz1Yy0Xx7Ww6Vv5Uu4"},
	{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl"},
	{"google-api-key", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "key AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"},
	{"stripe-key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "charging with sk_live_4eC39HqLyjWDarjtT1zdp7dc"},
}

// TestCassette_Hostile scrubs a stranger's cassette holding credentials
// of the common formats: in a tool result's text, in the server's stderr,
// in JSON members of any case ("Passphrase", "PIN"), in the command line
// (-p VALUE) and in a frame that is not UTF-8. None survives in the
// export, and the report counts each kind.
func TestCassette_Hostile(t *testing.T) {
	ctx := context.Background()
	in := open(t, "in.db")
	s := &store.Session{Name: "hostile", Transport: store.Stdio, StartedAt: time.Unix(1, 0), ExitCode: -1,
		Upstream: "db-server --user admin -p s3cr3tpw --passphrase=open-sesame --port 5432"}
	if err := in.CreateSession(ctx, s); err != nil {
		t.Fatal(err)
	}
	out := open(t, "out.db")
	st := &store.Stream{SessionID: s.ID, Kind: store.StdinStream}
	so := &store.Stream{SessionID: s.ID, Kind: store.StdoutStream}
	for _, x := range []*store.Stream{st, so} {
		if err := in.OpenStream(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	se := &store.Stream{SessionID: s.ID, Kind: store.StderrStream}
	if err := in.OpenStream(ctx, se); err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, h := range hostileSecrets {
		text.WriteString(h.context + "\n")
	}
	result := mustMarshal(t, map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"content": []any{map[string]any{"type": "text", "text": text.String()}}}})
	req := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"unlock","arguments":{"Passphrase":"open sesame","PIN":"0000","Password":"pw","card":{"pin":7391},"ref":"Zx9Qw8Er7Ty6"}}}`
	// Not UTF-8: a Latin-1 byte before a GitHub token and an e-mail.
	bad := append([]byte("caf\xe9 "), "token ghp_R2d2C3poBb8AaKk9Zz1Yy0Xx7Ww6Vv5Uu4 for ann@corp.example\n"...)
	frames := []*store.Frame{
		{SessionID: s.ID, StreamID: st.ID, Seq: 1, Direction: store.ClientToServer, Raw: []byte(req)},
		{SessionID: s.ID, StreamID: so.ID, Seq: 2, Direction: store.ServerToClient, Raw: result},
		{SessionID: s.ID, StreamID: se.ID, Seq: 3, Direction: store.ServerToClient, Raw: []byte(text.String())},
		{SessionID: s.ID, StreamID: se.ID, Seq: 4, Direction: store.ServerToClient, Raw: bad},
	}
	for _, f := range frames {
		kind := map[int64]store.StreamKind{st.ID: st.Kind, so.ID: so.Kind, se.ID: se.Kind}[f.StreamID]
		f.Derive(kind)
		if err := in.Append(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	for _, x := range []*store.Stream{st, so, se} {
		x.End = store.EndComplete
		if err := in.CloseStream(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if err := in.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if p := os.Getenv("MCPVCR_HOSTILE_JSONL"); p != "" { // for trying the binary on it
		var buf bytes.Buffer
		if err := in.Export(ctx, &buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	rep, err := scrub.Cassette(ctx, in, out, scrub.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := out.Export(ctx, &buf); err != nil {
		t.Fatal(err)
	}
	got := buf.String()
	// Decode what the export stored in base64 (the frame that is not
	// UTF-8) to look for the secrets there too.
	all := got + decodedB64(t, got)
	for _, h := range hostileSecrets {
		for _, line := range strings.Split(h.value, "\n") {
			if strings.Contains(all, line) {
				t.Errorf("%s %q survives scrub", h.kind, line)
			}
		}
		if rep.Counts[h.kind] == 0 {
			t.Errorf("Counts[%s] = 0; want some (all: %v)", h.kind, rep.Counts)
		}
	}
	for _, v := range []string{"s3cr3tpw", "open-sesame", "open sesame", `"0000"`, `"pw"`, "ann@corp.example"} {
		if strings.Contains(all, v) {
			t.Errorf("%q survives scrub", v)
		}
	}
	if !strings.Contains(all, "caf\xe9 ") || !strings.Contains(all, "--port 5432") || !strings.Contains(all, "--user admin") {
		t.Errorf("scrub changed what is not secret:\n%s", all)
	}
	// What no format names is reported, not replaced: a numeric PIN, a
	// short random run.
	if rep.Left[scrub.LeftNonString] != 1 || rep.Left["short-random-run"] == 0 {
		t.Errorf("Left = %v; want 1 %s and some short-random-run", rep.Left, scrub.LeftNonString)
	}
	if rep.Counts["argument"] != 2 {
		t.Errorf("Counts[argument] = %d; want 2", rep.Counts["argument"])
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decodedB64 returns the bytes of every *_b64 field of the JSONL export,
// one after another.
func decodedB64(t *testing.T, export string) string {
	t.Helper()
	var out strings.Builder
	for _, line := range strings.Split(export, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) != nil {
			continue
		}
		for k, v := range rec {
			if s, ok := v.(string); ok && strings.HasSuffix(k, "_b64") {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					t.Fatalf("%s: %v", k, err)
				}
				out.Write(b)
				out.WriteByte('\n')
			}
		}
	}
	return out.String()
}
