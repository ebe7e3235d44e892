package replayer

import (
	"slices"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/redact"
)

// TestRedactJSON_OneRule: the exported names are the one rule's (the
// labels are store's: internal/apicheck checks them).
func TestRedactJSON_OneRule(t *testing.T) {
	if !slices.Equal(RedactedJSON, redact.DefaultNames) {
		t.Errorf("RedactedJSON %v; want redact's %v", RedactedJSON, redact.DefaultNames)
	}
}
