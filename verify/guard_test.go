package verify

import (
	"net/url"
	"testing"
)

func TestRemote(t *testing.T) {
	for _, tt := range []struct {
		url  string
		want bool
	}{
		{"http://127.0.0.1:3001/mcp", false},
		{"http://localhost:3001/mcp", false},
		{"http://[::1]:3001/mcp", false},
		{"http://127.0.0.2/mcp", false},
		{"https://staging.example.com/mcp", true},
		{"http://10.0.0.5:8080/mcp", true},
	} {
		u, err := url.Parse(tt.url)
		if err != nil {
			t.Fatal(err)
		}
		if got := Remote(u); got != tt.want {
			t.Errorf("Remote(%s) = %v; want %v", tt.url, got, tt.want)
		}
	}
	if Remote(nil) {
		t.Errorf("Remote(nil) = true; want false (a command verify starts)")
	}
}

func TestToolAnnotations_MayWrite(t *testing.T) {
	tools := map[string]toolAnnotations{}
	toolsOf([]byte(`{"tools":[{"name":"ro","annotations":{"readOnlyHint":true}},{"name":"rw","annotations":{"readOnlyHint":false}},
		{"name":"bare"},{"name":"both","annotations":{"readOnlyHint":true,"destructiveHint":true}}]}`), tools)
	for name, writes := range map[string]bool{"ro": false, "rw": true, "bare": true, "both": true, "unknown": true} {
		if got := tools[name].mayWrite("live") != ""; got != writes {
			t.Errorf("tool %s may write = %v; want %v (%s)", name, got, writes, tools[name].mayWrite("live"))
		}
	}
}
