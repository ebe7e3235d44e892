package recorder

import (
	"slices"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/redact"
)

// TestRedactJSON_OneRule: the exported names are the one rule's (the
// label is store's: internal/apicheck checks it).
func TestRedactJSON_OneRule(t *testing.T) {
	if !slices.Equal(DefaultRedactedJSON, redact.DefaultNames) {
		t.Errorf("DefaultRedactedJSON %v; want redact's %v", DefaultRedactedJSON, redact.DefaultNames)
	}
}
