package replayer_test

import (
	"testing"

	"github.com/mcpvcr/mcpvcr/replayer"
	"github.com/mcpvcr/mcpvcr/store"
)

func TestEndpointPath(t *testing.T) {
	rec := func(upstream string) *store.Recording {
		return &store.Recording{Session: store.Session{Upstream: upstream}}
	}
	tests := []struct {
		name string
		recs []*store.Recording
		want string
	}{
		{"None", nil, "/mcp"},
		{"Stdio", []*store.Recording{rec("npx server")}, "/mcp"},
		{"Path", []*store.Recording{rec("npx server"), rec("http://127.0.0.1:3001/v1/mcp%2Fx")}, "/v1/mcp%2Fx"},
		{"NoPath", []*store.Recording{rec("http://127.0.0.1:3001")}, "/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := replayer.EndpointPath(tt.recs); got != tt.want {
				t.Errorf("EndpointPath = %q; want %q", got, tt.want)
			}
		})
	}
}
