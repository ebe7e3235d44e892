package args_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcpvcr/mcpvcr/internal/args"
)

func TestSplitCommand(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{`node server.js --port 3`, []string{"node", "server.js", "--port", "3"}, false},
		{`  node   "my server.js"  `, []string{"node", "my server.js"}, false},
		{`sh -c 'echo "$0" $1' a\ b`, []string{"sh", "-c", `echo "$0" $1`, "a b"}, false},
		{`x "a \"b\" \n" ''`, []string{"x", `a "b" \n`, ""}, false},
		{`x 'open`, nil, true},
		{`x "open`, nil, true},
		{`x \`, nil, true},
	}
	for _, tt := range tests {
		got, err := args.SplitCommand(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("args.SplitCommand(%q) error = %v; want error %t", tt.in, err, tt.wantErr)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("args.SplitCommand(%q) mismatch (-want +got):\n%s", tt.in, diff)
		}
	}
}

// TestParseHeaderLines: names are canonical, values keep commas and
// colons, and a bad line is named by its first word, never its value.
func TestParseHeaderLines(t *testing.T) {
	h, err := args.ParseHeaderLines([]string{"authorization: Bearer a:b", "X-List:  a, b "})
	if err != nil {
		t.Fatalf("ParseHeaderLines: %v", err)
	}
	want := http.Header{"Authorization": {"Bearer a:b"}, "X-List": {"a, b"}}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("ParseHeaderLines mismatch (-want +got):\n%s", diff)
	}
	if h, err := args.ParseHeaderLines(nil); h != nil || err != nil {
		t.Errorf("ParseHeaderLines(nil) = %v, %v; want nil, nil", h, err)
	}
	for _, line := range []string{"Bearer secret-token-value", "X Y: z", ": v", "averyveryverylongheadername-secret"} {
		_, err := args.ParseHeaderLines([]string{line})
		var le *args.HeaderLineError
		if !errors.As(err, &le) {
			t.Errorf("ParseHeaderLines(%q) error = %v; want a *HeaderLineError", line, err)
			continue
		}
		if strings.Contains(le.Start, "secret") || strings.Contains(err.Error(), "secret") {
			t.Errorf("ParseHeaderLines(%q) error %q shows the value", line, err)
		}
	}
}
