package replayer

import (
	"slices"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/redact"
)

// TestRedactJSON_OneRule: the exported names are the one rule's.
func TestRedactJSON_OneRule(t *testing.T) {
	if !slices.Equal(RedactedJSON, redact.DefaultNames) || RedactLabel != redact.Label || ScrubLabel != redact.ScrubLabel {
		t.Errorf("RedactedJSON %v, RedactLabel %q, ScrubLabel %q; want redact's %v, %q, %q", RedactedJSON, RedactLabel, ScrubLabel, redact.DefaultNames, redact.Label, redact.ScrubLabel)
	}
}
