package replayindex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/mcpvcr/mcpvcr/store"
)

var _ Cache = (*store.DB)(nil)

func openDB(t *testing.T) *store.DB {
	t.Helper()
	d, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// entries returns n sessions' hashes that share a few opening frames and
// part at client frames (some refused) and at server frames, some ending
// early.
func entries(r *rand.Rand, n int) []Entry {
	var es []Entry
	for i := range n {
		hs := []uint64{ClientBit | 1, 2}
		for range r.IntN(6) {
			switch r.IntN(4) {
			case 0:
				hs = append(hs, ClientBit|uint64(r.IntN(3)+10))
			case 1:
				hs = append(hs, ClientBit|RefusedBit|uint64(r.IntN(3)+10))
			default:
				hs = append(hs, uint64(r.IntN(3)+20))
			}
		}
		es = append(es, Entry{ID: int64(i + 1), Hashes: hs})
	}
	return es
}

// TestTree_StoredAsInMemory: a tree read back from the cache gives every
// node the children, whole and for each live hash, that the same tree
// held in memory gives; every node's sessions share its frames.
func TestTree_StoredAsInMemory(t *testing.T) {
	ctx := context.Background()
	d := openDB(t)
	for seed := range uint64(5) {
		es := entries(rand.New(rand.NewPCG(seed, 1)), 60)
		nodes := Build(es)
		name := Name(fmt.Sprint("mode", seed), []int64{int64(seed)})
		if err := PutTree(ctx, d, name, nodes); err != nil {
			t.Fatal(err)
		}
		stored, ok, err := OpenTree(ctx, d, name)
		if err != nil || !ok {
			t.Fatalf("OpenTree = %v, %v; want the tree just stored", ok, err)
		}
		mem := MemTree(nodes)
		if diff := cmp.Diff(mem.Root(), stored.Root(), cmp.AllowUnexported(Node{})); diff != "" {
			t.Errorf("Root() (-mem +stored):\n%s", diff)
		}
		if got := mem.Root().Size; got != len(es) {
			t.Errorf("root size %d; want %d", got, len(es))
		}
		lives := []*uint64{nil}
		for _, h := range []uint64{10, 11, 12, 13} {
			lives = append(lives, &[]uint64{ClientBit | h}[0])
		}
		// A second stored tree for the children of a live hash: the first
		// holds every node's children once asked for them all.
		filtered, _, err := OpenTree(ctx, d, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range nodes {
			for _, live := range lives {
				want, _ := mem.Children(ctx, n, live)
				from := stored
				if live != nil {
					from = filtered
				}
				got, err := from.Children(ctx, n, live)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(want, got, cmp.AllowUnexported(Node{}), cmpopts.EquateEmpty()); diff != "" {
					t.Errorf("seed %d: Children(%d, %v) (-mem +stored):\n%s", seed, n.ID, live, diff)
				}
			}
		}
	}
	// The last tree stored replaced the others.
	if _, ok, _ := OpenTree(ctx, d, Name("mode0", []int64{0})); ok {
		t.Error("the first tree is still stored after others")
	}
}

// TestExchanges_StoredAsInMemory: an exchange index read back from the
// cache answers Groups, At and Kind as the same rows held in memory do.
func TestExchanges_StoredAsInMemory(t *testing.T) {
	ctx := context.Background()
	d := openDB(t)
	r := rand.New(rand.NewPCG(1, 2))
	var rows []Row
	kinds, keys, infos := []string{"pool", "door", "has"}, []string{"a", "b", "a b"}, []string{"", "x", "y", "z"}
	for i := range 200 {
		rows = append(rows, Row{Kind: kinds[r.IntN(3)], Key: keys[r.IntN(3)], Info: infos[r.IntN(4)], Ord: int64(i),
			Session: int64(r.IntN(50)), Stream: int64(r.IntN(500))})
	}
	if err := PutExchanges(ctx, d, "x", "one", rows); err != nil {
		t.Fatal(err)
	}
	stored, ok, err := OpenExchanges(ctx, d, "x", "one")
	if err != nil || !ok {
		t.Fatalf("OpenExchanges = %v, %v; want the index just stored", ok, err)
	}
	mem := MemExchanges(rows)
	for _, kind := range kinds {
		want, _ := mem.Kind(ctx, kind)
		got, err := stored.Kind(ctx, kind)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Kind(%s) (-mem +stored):\n%s", kind, diff)
		}
		for _, key := range append(keys, "none") {
			want, _ := mem.Groups(ctx, kind, key)
			got, err := stored.Groups(ctx, kind, key)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Groups(%s, %s) (-mem +stored):\n%s", kind, key, diff)
			}
			for _, in := range [][]string{nil, {"x"}, {"y", ""}, {"z", "x", "y"}, {"w"}} {
				for n := range 30 {
					want, wok, _ := mem.At(ctx, kind, key, in, n)
					got, gok, err := stored.At(ctx, kind, key, in, n)
					if err != nil {
						t.Fatal(err)
					}
					if diff := cmp.Diff(want, got); diff != "" || wok != gok {
						t.Errorf("At(%s, %s, %q, %d) = %v (-mem +stored):\n%s", kind, key, in, n, gok, diff)
					}
				}
			}
		}
	}
	if err := PutExchanges(ctx, d, "x", "two", rows[:1]); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := OpenExchanges(ctx, d, "x", "one"); ok {
		t.Error("index one is still stored after index two")
	}
}

// TestHashes: hashes stored in one mode read back in that mode only, a
// later mode replacing them per session.
func TestHashes(t *testing.T) {
	ctx := context.Background()
	d := openDB(t)
	var ids []int64
	for range 3 {
		s := &store.Session{Transport: store.Stdio}
		if err := d.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	a := map[int64][]uint64{ids[0]: {1, ClientBit | 2}, ids[1]: {}, ids[2]: {3}}
	if err := PutHashes(ctx, d, "a", a); err != nil {
		t.Fatal(err)
	}
	if err := PutHashes(ctx, d, "b", map[int64][]uint64{ids[2]: {4}, ids[2] + 100: {5}}); err != nil {
		t.Fatal(err)
	}
	got, err := Hashes(ctx, d, "a")
	if err != nil {
		t.Fatal(err)
	}
	delete(a, ids[2])
	a[ids[1]] = []uint64{}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("Hashes(a) (-want +got):\n%s", diff)
	}
	if got, _ := Hashes(ctx, d, "b"); !cmp.Equal(got, map[int64][]uint64{ids[2]: {4}}) {
		t.Errorf("Hashes(b) = %v; want only session %d's (no hashes of a session that does not exist)", got, ids[2])
	}
}

// TestLeaves: the leaves under the root name one session for each
// distinct way the sessions end, the first of its kind, and no other.
func TestLeaves(t *testing.T) {
	ctx := context.Background()
	for seed := range uint64(5) {
		es := entries(rand.New(rand.NewPCG(seed, 2)), 40)
		tr := MemTree(Build(es))
		got, err := Leaves(ctx, tr, []Node{tr.Root()})
		if err != nil {
			t.Fatal(err)
		}
		first := map[string]int64{} // a session's hashes -> the first session with them
		var want []int64
		for _, e := range es {
			k := fmt.Sprint(e.Hashes)
			if _, ok := first[k]; !ok {
				first[k] = e.ID
				want = append(want, e.ID)
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("seed %d: leaves (-want +got):\n%s", seed, diff)
		}
	}
}
