package store

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDB_Cache stores entries in two cache tables and reads them back by
// key and by prefix, in key order, from an offset and up to a limit; a
// put with replace empties its table first and leaves the other alone.
func TestDB_Cache(t *testing.T) {
	ctx := context.Background()
	d, _ := openTestDB(t, "c.db")
	keys := func(es []CacheEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, string(e.Key))
		}
		return out
	}
	put := []CacheEntry{
		{Key: []byte("a\xff"), Value: []byte("1")},
		{Key: []byte("a\x00b"), Value: []byte("2")},
		{Key: []byte("a"), Value: []byte("3")},
		{Key: []byte("b"), Value: []byte("4")},
		{Key: []byte{}, Value: []byte("5")},
		{Key: []byte("\xff\xff"), Value: []byte("6")},
	}
	if err := d.CachePut(ctx, "one", false, put); err != nil {
		t.Fatal(err)
	}
	if err := d.CachePut(ctx, "two", false, put[:1]); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		prefix        string
		offset, limit int
		want          []string
	}{
		{"", 0, 0, []string{"", "a", "a\x00b", "a\xff", "b", "\xff\xff"}},
		{"a", 0, 0, []string{"a", "a\x00b", "a\xff"}},
		{"a", 1, 1, []string{"a\x00b"}},
		{"a\xff", 0, 0, []string{"a\xff"}},
		{"\xff", 0, 0, []string{"\xff\xff"}},
		{"c", 0, 0, nil},
	} {
		es, err := d.CacheRange(ctx, "one", []byte(tt.prefix), tt.offset, tt.limit)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tt.want, keys(es)); diff != "" {
			t.Errorf("CacheRange(%q, %d, %d) (-want +got):\n%s", tt.prefix, tt.offset, tt.limit, diff)
		}
	}
	if v, ok, err := d.CacheGet(ctx, "one", []byte("a")); err != nil || !ok || string(v) != "3" {
		t.Errorf(`CacheGet("a") = %q, %v, %v; want "3", true`, v, ok, err)
	}
	if _, ok, err := d.CacheGet(ctx, "one", []byte("a\x00")); err != nil || ok {
		t.Errorf(`CacheGet("a\x00") = %v, %v; want false: only a longer key starts so`, ok, err)
	}
	if err := d.CachePut(ctx, "one", true, []CacheEntry{{Key: []byte("z"), Value: []byte("7")}}); err != nil {
		t.Fatal(err)
	}
	if es, _ := d.CacheRange(ctx, "one", nil, 0, 0); !cmp.Equal(keys(es), []string{"z"}) {
		t.Errorf("after a replacing put: %q; want only z", keys(es))
	}
	if es, _ := d.CacheRange(ctx, "two", nil, 0, 0); len(es) != 1 {
		t.Errorf("the other table after a replacing put: %q; want its one entry", keys(es))
	}
}
