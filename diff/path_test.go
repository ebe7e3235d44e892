package diff

import (
	"errors"
	"testing"
)

func TestParsePath(t *testing.T) {
	tests := []struct {
		in, want string // want "" means in
	}{
		{in: "result"},
		{in: "result.content[*].text"},
		{in: "result.content[0].text"},
		{in: "error.data"},
		{in: "result.tools[name=add].inputSchema"},
		{in: "result.contents[uri=demo://resource/dynamic/text/1].text"},
		{in: `result._meta["io.modelcontextprotocol/serverInfo"].version`},
		{in: "result.*.version"},
		{in: "**.timestamp"},
		{in: "tools/call info:result.structuredContent"},
		{in: "#12:**"},
		{in: "server:notifications[\"notifications/message\"][*].params"},
		{in: "resources/read test://x/1:result.contents"},
		{in: ".result.x", want: "result.x"},
		{in: `["result"]["a"]`, want: "result.a"},
		{in: " tools/list : result.tools ", want: "tools/list:result.tools"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			p, err := ParsePath(tt.in)
			if err != nil {
				t.Fatalf("ParsePath(%q) = %v", tt.in, err)
			}
			want := tt.want
			if want == "" {
				want = tt.in
			}
			if got := p.String(); got != want {
				t.Errorf("ParsePath(%q).String() = %q; want %q", tt.in, got, want)
			}
			q, err := ParsePath(p.String())
			if err != nil || q.String() != p.String() {
				t.Errorf("ParsePath(%q) does not round-trip: %q, %v", p.String(), q.String(), err)
			}
		})
	}
}

func TestParsePath_Errors(t *testing.T) {
	for _, in := range []string{
		"", "result[", "result[x]", "result[-1]", "result..x", "result.a b", ":result", `result["a]`,
		"result[color=red]", "tools/list:", "result]",
	} {
		t.Run(in, func(t *testing.T) {
			if _, err := ParsePath(in); !errors.Is(err, ErrBadPath) {
				t.Errorf("ParsePath(%q) = %v; want an error wrapping ErrBadPath", in, err)
			}
		})
	}
}

// concrete parses a path of a difference (no wildcards).
func concrete(tb testing.TB, s string) []pathSeg {
	tb.Helper()
	if s == "" {
		return nil
	}
	p, err := ParsePath(s)
	if err != nil {
		tb.Fatal(err)
	}
	return p.segs
}

func TestPath_Covers(t *testing.T) {
	info := scope{Seq: 10, Method: "tools/call", Name: "info"}
	list := scope{Seq: 4, Method: "tools/list"}
	server := scope{}
	tests := []struct {
		pattern string
		sc      scope
		path    string
		want    bool
	}{
		{"result", info, "result.structuredContent.version", true},
		{"result", info, "", false},
		{"result.structuredContent.version", info, "result.structuredContent", false},
		{"result.content[*].text", info, "result.content[3].text", true},
		{"result.content[1].text", info, "result.content[3].text", false},
		{"result.tools[*]", list, "result.tools[name=add].description", true},
		{"result.tools[name=add]", list, "result.tools[name=add].description", true},
		{"result.tools[name=add]", list, "result.tools[name=multiply]", false},
		{"result.*.version", info, "result.structuredContent.version", true},
		{"result.*.version", info, "result.content[0].version", false},
		{"**.version", info, "result.structuredContent.version", true},
		{"**.version", info, "result.structuredContent.name", false},
		{"**", info, "", true},
		{"result.**.text", info, "result.text", true},
		{"tools/call:result", info, "result.x", true},
		{"tools/call info:result", info, "result.x", true},
		{"tools/call echo:result", info, "result.x", false},
		{"tools/list:result", info, "result.x", false},
		{"#10:result", info, "result.x", true},
		{"#11:result", info, "result.x", false},
		{"server:requests", info, "requests", false},
		{"server:requests", server, "requests.x", true},
		{"tools/call:requests", server, "requests.x", false},
		{"requests", server, "requests.x", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" "+tt.path, func(t *testing.T) {
			p, err := ParsePath(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.covers(tt.sc, concrete(t, tt.path)); got != tt.want {
				t.Errorf("ParsePath(%q).covers(%+v, %q) = %v; want %v", tt.pattern, tt.sc, tt.path, got, tt.want)
			}
		})
	}
}
