package audit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocs: docs/audit.md lists every rule with its level, so that the
// page and the code do not drift apart.
func TestDocs(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "audit.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules() {
		row := ""
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "| `"+r.ID+"` |") {
				row = l
			}
		}
		if row == "" {
			t.Errorf("docs/audit.md has no row for %s", r.ID)
			continue
		}
		if !strings.Contains(row, "| "+r.Level.Keyword()+" |") || !strings.Contains(row, r.Section) {
			t.Errorf("docs/audit.md row of %s does not say %s and %s:\n%s", r.ID, r.Level.Keyword(), r.Section, row)
		}
	}
}
