package recorder

import (
	"slices"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/redact"
)

// TestRedactJSON_OneRule: the exported names are the one rule's.
func TestRedactJSON_OneRule(t *testing.T) {
	if !slices.Equal(DefaultRedactedJSON, redact.DefaultNames) || RedactLabel != redact.Label {
		t.Errorf("DefaultRedactedJSON %v, RedactLabel %q; want redact's %v, %q", DefaultRedactedJSON, RedactLabel, redact.DefaultNames, redact.Label)
	}
}
