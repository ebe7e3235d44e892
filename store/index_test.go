package store

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDB_SessionIDsAndLabelValues(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, s := range []*Session{
		{Transport: Stdio, Labels: map[string]string{"match-ignore": "params.a"}},
		{Transport: StreamableHTTP},
		{Transport: Stdio, Labels: map[string]string{"match-ignore": "params.b", "x.y": "1"}},
	} {
		if err := d.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	ids, err := d.SessionIDs(ctx, Stdio)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{1, 3}, ids); diff != "" {
		t.Errorf("SessionIDs(stdio) (-want +got):\n%s", diff)
	}
	vals, err := d.LabelValues(ctx, "match-ignore", 3)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"params.b"}, vals); diff != "" {
		t.Errorf("LabelValues (-want +got):\n%s", diff)
	}
	if vals, _ := d.LabelValues(ctx, "x.y"); len(vals) != 1 {
		t.Errorf("LabelValues(x.y) = %q; want the dotted key's value", vals)
	}
}
