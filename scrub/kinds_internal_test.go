package scrub

import (
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/redact"
)

// TestKinds_OneRule: the kinds scrub reports are the patterns' kinds.
func TestKinds_OneRule(t *testing.T) {
	if KindEmail != redact.KindEmail || KindHome != redact.KindHome || KindToken != redact.KindToken {
		t.Errorf("kinds %q %q %q; want redact's %q %q %q", KindEmail, KindHome, KindToken, redact.KindEmail, redact.KindHome, redact.KindToken)
	}
}
