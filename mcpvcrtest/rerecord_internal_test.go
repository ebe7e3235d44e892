package mcpvcrtest

import (
	"strings"
	"testing"
)

// TestReRecordHint: in replay-with-new-episodes the hint says why the
// new traffic was not recorded (the test's session exists), and both
// modes say how to record it again, naming the test.
func TestReRecordHint(t *testing.T) {
	for _, tc := range []struct {
		mode Mode
		want string
	}{
		{ModeReplayOnly, "start the server and record this test again"},
		{ModeReplayWithNewEpisodes, "replays a test whose session the cassette holds already"},
	} {
		got := reRecordHint(t, tc.mode)
		for _, want := range []string{tc.want, "go test -run '^TestReRecordHint$' -mcpvcr=record-only"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: the hint says %q; want %q", tc.mode, got, want)
			}
		}
	}
}
