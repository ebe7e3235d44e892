package recorder_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcpvcr/mcpvcr/recorder"
)

// TestHTTP_RedactsJSONMembers: a request with a password argument and an
// SSE answer carrying a token go through unchanged, and are stored with
// placeholders for both values (the SSE event rebuilt around its new
// data); every other byte is stored as sent.
func TestHTTP_RedactsJSONMembers(t *testing.T) {
	const call = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"login","arguments":{"user":"ann", "Password" : "hunter2"}}}`
	const answer = "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\n" + `data: "result":{"structuredContent":{"access_token":"tok-9","token_type":"Bearer"}}}` + "\n\n"
	var got []byte
	up := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, _ = io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, answer)
	})
	u, db, _ := proxy(t, up)
	resp, err := http.Post(u, "application/json", strings.NewReader(call))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(got) != call || string(body) != answer {
		t.Errorf("forwarded %q and answered %q; want both unchanged", got, body)
	}
	waitClosed(t, db, 1)
	_, frames := framesOf(t, db)
	if len(frames) != 2 {
		t.Fatalf("stored %d frames; want 2", len(frames))
	}
	req, ev := string(frames[0].Raw), string(frames[1].Raw)
	if !strings.HasPrefix(req, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"login","arguments":{"user":"ann", "Password" : "REDACTED-`) || strings.Contains(req, "hunter2") {
		t.Errorf("stored request %q; want the password as a placeholder, every other byte as sent", req)
	}
	if !strings.HasPrefix(ev, "id: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\ndata: \"result\":{\"structuredContent\":{\"access_token\":\"REDACTED-") ||
		strings.Contains(ev, "tok-9") || !strings.Contains(ev, `"token_type":"Bearer"}}}`+"\n\n") {
		t.Errorf("stored event %q; want the token as a placeholder, every other byte as sent", ev)
	}
	if d := string(frames[1].Data); strings.Contains(d, "tok-9") || !strings.Contains(d, "REDACTED-") {
		t.Errorf("stored event data %q; want the placeholder", d)
	}
}

// TestRedactor_JSONBody: names compare without case, '_' and '-'; a
// placeholder is not redacted again; NoJSON and JSON change the set.
func TestRedactor_JSONBody(t *testing.T) {
	tests := []struct {
		name string
		red  *recorder.Redactor
		in   string
		kept []string // substrings that must remain
		gone []string // substrings that must not
	}{
		{"Defaults", &recorder.Redactor{}, `{"a":{"API-KEY":"k1","apiKey":"k2","private_key":"k3","progressToken":"p","token":7,"secret":["s"]}}`,
			[]string{`"progressToken":"p"`, `"token":7`, `"secret":["s"]`}, []string{"k1", "k2", "k3"}},
		{"Escaped name", &recorder.Redactor{}, `{"pass\u0077ord":"w1"}`, nil, []string{"w1"}},
		{"Placeholder kept", &recorder.Redactor{}, `{"token":"REDACTED-0123456789ab"}`, []string{"REDACTED-0123456789ab"}, nil},
		{"Extra name", &recorder.Redactor{JSON: []string{"ssn"}}, `{"SSN":"n1","password":"w2"}`, nil, []string{"n1", "w2"}},
		{"Off", &recorder.Redactor{NoJSON: true}, `{"password":"w3"}`, []string{"w3"}, nil},
		{"Not JSON", &recorder.Redactor{}, `{"password":"w4"`, []string{"w4"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.red.JSONBody([]byte(tt.in)))
			for _, k := range tt.kept {
				if !strings.Contains(got, k) {
					t.Errorf("JSONBody(%s) = %s; want it to keep %s", tt.in, got, k)
				}
			}
			for _, g := range tt.gone {
				if strings.Contains(got, g) {
					t.Errorf("JSONBody(%s) = %s; want %s redacted", tt.in, got, g)
				}
			}
		})
	}
}

// TestRedactor_SecretHeaders: *-Key, *-Secret and *-Token headers are
// redacted, in any case; others are kept.
func TestRedactor_SecretHeaders(t *testing.T) {
	r := &recorder.Redactor{}
	h := r.Header(http.Header{
		"Ocp-Apim-Subscription-Key": {"sub-1"}, "X-Client-Secret": {"cs-1"}, "X-Session_token": {"st-1"},
		"Accept": {"application/json"}, "Mcp-Session-Id": {"sid-1"}, "Keyboard": {"k"},
	})
	for _, k := range []string{"Ocp-Apim-Subscription-Key", "X-Client-Secret", "X-Session_token"} {
		if v := h.Get(k); !strings.HasPrefix(v, "REDACTED-") {
			t.Errorf("%s stored as %q; want a placeholder", k, v)
		}
	}
	for k, v := range map[string]string{"Accept": "application/json", "Mcp-Session-Id": "sid-1", "Keyboard": "k"} {
		if h.Get(k) != v {
			t.Errorf("%s stored as %q; want %q", k, h.Get(k), v)
		}
	}
}
