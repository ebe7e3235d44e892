package replayer

import (
	"net/http"
	"testing"
)

// TestShape_RedactedParamHeader: an Mcp-Param-* header the recorder
// stored as a placeholder (its name looks like a credential) matches any
// live value; other Mcp-Param-* values still count.
func TestShape_RedactedParamHeader(t *testing.T) {
	rec := shapeOf("POST", "/mcp", http.Header{"Mcp-Param-Api-Key": {"REDACTED-0123456789ab"}, "Mcp-Param-Region": {"eu"}})
	tests := []struct {
		region string
		want   bool
	}{{"eu", true}, {"us", false}}
	for _, tt := range tests {
		live := shapeOf("POST", "/mcp", http.Header{"Mcp-Param-Api-Key": {"real-key"}, "Mcp-Param-Region": {tt.region}})
		if got := rec.same(live); got != tt.want {
			t.Errorf("recorded %v same as live %v = %v; want %v", rec, live, got, tt.want)
		}
	}
}
