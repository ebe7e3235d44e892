package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestCreate_LinkSwapped: the output path is a link to a device when
// Create looks at it, and a link to another file when it opens it (an
// attacker's swap, made here at that very moment). Create refuses, and
// the other file keeps every byte (issue #48: export -o wrote into it).
func TestCreate_LinkSwapped(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.jsonl")
	if err := os.Symlink(os.DevNull, out); err != nil {
		t.Skipf("symlink: %v", err)
	}
	beforeOpen = func() {
		os.Remove(out)
		if err := os.Symlink(victim, out); err != nil {
			t.Error(err)
		}
	}
	defer func() { beforeOpen = nil }()
	f, err := Create(out)
	if err == nil {
		f.WriteString("export")
		f.Commit()
		t.Fatal("Create wrote through a swapped link")
	}
	if !errors.Is(err, ErrChanged) {
		t.Errorf("err = %v; want ErrChanged", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "precious" {
		t.Errorf("the other file holds %q; want it untouched", b)
	}
}
