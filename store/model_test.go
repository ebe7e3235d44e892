package store_test

import (
	"net/http"
	"testing"

	"github.com/mcpvcr/mcpvcr/store"
)

// TestStream_SSE: the one rule for "this stream was answered with an
// event stream" reads the media type, not a prefix of the header.
func TestStream_SSE(t *testing.T) {
	for _, tt := range []struct {
		ct   string
		want bool
	}{
		{"text/event-stream", true},
		{"text/event-stream; charset=utf-8", true},
		{"Text/Event-Stream", true},
		{"application/json", false},
		{"", false},
		{"text/event-streams", false},
	} {
		st := &store.Stream{ResponseHeader: http.Header{}}
		if tt.ct != "" {
			st.ResponseHeader.Set("Content-Type", tt.ct)
		}
		if got := st.SSE(); got != tt.want {
			t.Errorf("Stream{Content-Type: %q}.SSE() = %v; want %v", tt.ct, got, tt.want)
		}
	}
	if (&store.Stream{}).SSE() {
		t.Error("Stream{}.SSE() = true; want false (no response)")
	}
}
