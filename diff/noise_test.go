package diff

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// shownJSON normalises raw and renders it as the report shows values.
func shownJSON(raw string) string { return string(jsonOf(normalize([]byte(raw)))) }

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"Timestamp", `{"at":"2026-08-01T12:34:56.789Z"}`, `{"at":"<timestamp>"}`},
		{"TimestampInText", `{"text":"created at 2026-08-01 12:34:56+02:00, done"}`, `{"text":"created at <timestamp>, done"}`},
		{"DateAloneIsKept", `{"protocolVersion":"2025-06-18"}`, `{"protocolVersion":"2025-06-18"}`},
		{"UUID", `{"id":"job 123e4567-e89b-12d3-a456-426614174000"}`, `{"id":"job <uuid>"}`},
		{"Cursors", `{"nextCursor":"abc","x":{"cursor":"def"}}`, `{"nextCursor":"<cursor>","x":{"cursor":"<cursor>"}}`},
		{"RequestState", `{"resultType":"input_required","requestState":"opaque"}`, `{"requestState":"<requestState>","resultType":"input_required"}`},
		{"VolatileMeta", `{"_meta":{"progressToken":7,"traceparent":"00-1"},"a":1}`, `{"a":1}`},
		{"MetaKept", `{"_meta":{"progressToken":7,"io.modelcontextprotocol/serverInfo":{"name":"s"}}}`, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s"}}}`},
		{"Numbers", `{"a":1.0,"b":1e2}`, `{"a":1,"b":100}`},
		{"TextJSON", `{"content":[{"type":"text","text":"{\"b\":2,\"a\":[1]}"}]}`, `{"content":[{"text":{"a":[1],"b":2},"type":"text"}]}`},
		{"TextNotJSON", `{"content":[{"type":"text","text":"{not json"}]}`, `{"content":[{"text":"{not json","type":"text"}]}`},
		{"Mirror", `{"content":[{"type":"text","text":"{\"v\":\"1\"}"}],"structuredContent":{"v":"1"}}`,
			`{"content":[{"text":"<structuredContent>","type":"text"}],"structuredContent":{"v":"1"}}`},
		{"NotAMirror", `{"content":[{"type":"text","text":"{\"v\":\"2\"}"}],"structuredContent":{"v":"1"}}`,
			`{"content":[{"text":{"v":"2"},"type":"text"}],"structuredContent":{"v":"1"}}`},
		{"KeyedBecomesSorted", `{"tools":[{"name":"b"},{"name":"a"}]}`, `{"tools":[{"name":"a"},{"name":"b"}]}`},
		{"NotJSON", `oops`, `"oops"`},
		{"SecretMembers", `{"access_token":"REDACTED-0123456789ab","x":{"apiKey":"k"},"token":1,"token_type":"Bearer"}`,
			`{"access_token":"<redacted>","token":1,"token_type":"Bearer","x":{"apiKey":"<redacted>"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shownJSON(tt.in); got != tt.want {
				t.Errorf("normalize(%s) = %s; want %s", tt.in, got, tt.want)
			}
		})
	}
}

func TestKeyed(t *testing.T) {
	tests := []struct {
		name string
		in   string
		keys []string // nil: not keyed
	}{
		{"Names", `[{"name":"a"},{"name":"b"}]`, []string{"name=a", "name=b"}},
		{"URIs", `[{"uri":"x://1"},{"uri":"x://2","name":"same"},{"uri":"x://3","name":"same"}]`, []string{"uri=x://1", "uri=x://2", "uri=x://3"}},
		{"Duplicates", `[{"name":"a"},{"name":"a"}]`, nil},
		{"NotObjects", `[1,2]`, nil},
		{"Mixed", `[{"name":"a"},{"other":1}]`, nil},
		{"Empty", `[]`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var list []any
			if err := json.Unmarshal([]byte(tt.in), &list); err != nil {
				t.Fatal(err)
			}
			kl, ok := keyed(list)
			if ok != (tt.keys != nil) {
				t.Fatalf("keyed(%s) ok = %v; want %v", tt.in, ok, tt.keys != nil)
			}
			var got []string
			for _, k := range tt.keys {
				if _, found := kl[k]; found {
					got = append(got, k)
				}
			}
			if diff := cmp.Diff(tt.keys, got); diff != "" || len(kl) != len(tt.keys) {
				t.Errorf("keyed(%s) keys (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseNoise(t *testing.T) {
	n, err := ParseNoise("// learned\n#12:result.content[0].text\n\nserver:notifications[*]\n")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := n.String(), "#12:result.content[0].text\nserver:notifications[*]"; got != want {
		t.Errorf("ParseNoise(...).String() = %q; want %q", got, want)
	}
	m := n.With(Noise{Paths: []Path{MustParsePath("server:notifications[*]"), MustParsePath("result.x")}})
	if got, want := len(m.Paths), 3; got != want {
		t.Errorf("With: %d paths; want %d (no duplicates)", got, want)
	}
	if _, err := ParseNoise("result["); err == nil {
		t.Error("ParseNoise(bad path) = nil error")
	}
}
