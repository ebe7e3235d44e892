package outfile_test

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mcpvcr/mcpvcr/internal/outfile"
)

// TestCreate_LinkRace swaps the output path between a link to a device
// and a link to another file while Create runs, a bounded number of
// times: the other file is never written, whatever the timing.
func TestCreate_LinkRace(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.jsonl")
	if err := os.Symlink(os.DevNull, out); err != nil {
		t.Skipf("symlink: %v", err)
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tmp := filepath.Join(dir, "swap")
		for i := 0; !stop.Load(); i++ {
			target := os.DevNull
			if i%2 == 1 {
				target = victim
			}
			os.Remove(tmp)
			if os.Symlink(target, tmp) == nil {
				os.Rename(tmp, out) // atomic: out is always a link
			}
		}
	}()
	clobbered := 0
	const runs = 400
	for range runs {
		f, err := outfile.Create(out)
		if err != nil {
			continue
		}
		f.WriteString("export")
		f.Commit()
		if b, _ := os.ReadFile(victim); string(b) != "precious" {
			clobbered++
			os.WriteFile(victim, []byte("precious"), 0o600)
		}
		// A regular-file path renames over the link: put one back.
		if fi, err := os.Lstat(out); err == nil && fi.Mode().IsRegular() {
			os.Remove(out)
			os.Symlink(os.DevNull, out)
		}
	}
	stop.Store(true)
	wg.Wait()
	if clobbered > 0 {
		t.Errorf("another file was written through the output link in %d of %d runs", clobbered, runs)
	}
}
