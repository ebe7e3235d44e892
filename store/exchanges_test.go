package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDB_ReplayExchanges stores an exchange index and reads it back by
// kind, by groups of a key and by place among the rows of some infos; a
// new index replaces the old.
func TestDB_ReplayExchanges(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rows := []ReplayExchange{
		{Kind: "has", Key: "index", Ord: 0},
		{Kind: "pool", Key: "POST a", Info: "x", Ord: 1, Session: 1, Stream: 10},
		{Kind: "pool", Key: "POST a", Info: "y", Ord: 2, Session: 2, Stream: 20},
		{Kind: "pool", Key: "POST a", Info: "x", Ord: 3, Session: 3, Stream: 30},
		{Kind: "pool", Key: "POST b", Info: "x", Ord: 4, Session: 3, Stream: 31},
	}
	if ok, err := d.HasReplayExchanges(ctx, "one"); err != nil || ok {
		t.Fatalf("HasReplayExchanges before any = %v, %v; want false", ok, err)
	}
	if err := d.PutReplayExchanges(ctx, "one", rows); err != nil {
		t.Fatal(err)
	}
	if ok, err := d.HasReplayExchanges(ctx, "one"); err != nil || !ok {
		t.Fatalf("HasReplayExchanges = %v, %v; want true", ok, err)
	}
	gs, err := d.ReplayExchangeGroups(ctx, "one", "pool", "POST a")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]ReplayExchangeGroup{{"x", 2}, {"y", 1}}, gs); diff != "" {
		t.Errorf("ReplayExchangeGroups (-want +got):\n%s", diff)
	}
	for _, tt := range []struct {
		infos   []string
		n       int
		session int64
		found   bool
	}{{nil, 0, 1, true}, {nil, 1, 2, true}, {[]string{"x"}, 1, 3, true}, {[]string{"y", "x"}, 2, 3, true}, {[]string{"x"}, 2, 0, false}} {
		x, ok, err := d.ReplayExchangeAt(ctx, "one", "pool", "POST a", tt.infos, tt.n)
		if err != nil || ok != tt.found || x.Session != tt.session {
			t.Errorf("ReplayExchangeAt(%q, %d) = session %d, %v, %v; want %d, %v", tt.infos, tt.n, x.Session, ok, err, tt.session, tt.found)
		}
	}
	kind, err := d.ReplayExchangeKind(ctx, "one", "pool")
	if err != nil || len(kind) != 4 || kind[3].Stream != 31 {
		t.Errorf("ReplayExchangeKind = %+v, %v; want the four pool rows in order", kind, err)
	}
	if err := d.PutReplayExchanges(ctx, "two", rows[:1]); err != nil {
		t.Fatal(err)
	}
	if ok, _ := d.HasReplayExchanges(ctx, "one"); ok {
		t.Errorf("index one is still stored after index two replaced it")
	}
}
