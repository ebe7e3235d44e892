package main

import (
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/mcptest"
)

// TestMultiSession_Rules replays each committed multi-session cassette
// (eight sessions sharing their opening frames) as TestMultiSession does,
// every run at once and in random order to the upgraded client, under
// matching rules other than the tolerant default: an --ignore rule, and
// --match exact with the --ignore rules that leave out the upgraded
// client's clientInfo (without them exact matching refuses it, see
// TestClientUpgrade_ExactMulti). Each run must get its own live answers
// and replay must exit 0 with every frame matched: the rules are honoured
// by the way replay finds each client's candidate sessions (over stdio a
// replay index and tree of those rules), not only by the match itself.
func TestMultiSession_Rules(t *testing.T) {
	parallel(t)
	rules := []struct {
		name  string
		flags func(s multiSuite) []string
	}{
		{"Ignore", func(multiSuite) []string {
			return []string{"--ignore", "initialize:params.capabilities.roots", "--ignore", "tools/list:params.cursor"}
		}},
		{"ExactIgnoringClientInfo", func(s multiSuite) []string {
			if s.version == mcptest.V20260728 {
				// The client describes itself in every request's _meta.
				return []string{"--match", "exact", "--ignore", `params._meta["io.modelcontextprotocol/clientInfo"]`}
			}
			return []string{"--match", "exact", "--ignore", "initialize:params.clientInfo"}
		}},
	}
	for _, s := range multiSuites() {
		for _, r := range rules {
			t.Run(s.name+"/"+r.name, func(t *testing.T) {
				t.Parallel()
				s.replayAll(t, upgradedClient, r.flags(s)...)
			})
		}
	}
}
