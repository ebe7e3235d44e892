package mcpvcrtest

import (
	"path/filepath"
	"testing"

	"github.com/mcpvcr/mcpvcr/chaos"
)

// TestChaosRate: ChaosRate sets how many faults Chaos draws per session,
// as --chaos-rate does, whatever the order of the two options.
func TestChaosRate(t *testing.T) {
	cassette := filepath.Join("..", "cassettes", "multi-gosdk-http-sse.jsonl")
	for _, tc := range []struct {
		name string
		opts []Option
		want int
	}{
		{"default", []Option{Chaos(1)}, 3},
		{"one", []Option{Chaos(1), ChaosRate(1)}, 1},
		{"five, rate first", []Option{ChaosRate(5), Chaos(1)}, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newConfig(tc.opts)
			recs := loadAll(t, cassette, c, "NewServer")
			srv := newServer(t, recs, c, "NewServer")
			if got := len(srv.Hook.(*chaos.Hook).Plan(recs[0])); got != tc.want {
				t.Errorf("Chaos drew %d faults in session 1; want %d", got, tc.want)
			}
		})
	}
}
