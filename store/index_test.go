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

func TestDB_SummarizeHTTP(t *testing.T) {
	ctx := context.Background()
	d, err := Open(ctx, filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	sessions := []*Session{
		{Transport: StreamableHTTP, ExternalID: "a"},
		{Transport: StreamableHTTP},
		{Transport: StreamableHTTP, Era: EraModern},
		{Transport: LegacySSE},
		{Transport: Stdio},
	}
	for _, s := range sessions {
		if err := d.CreateSession(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range []*Stream{
		{SessionID: sessions[0].ID, Kind: PostStream, Status: 200},
		{SessionID: sessions[0].ID, Kind: PostStream, Status: 403},
		{SessionID: sessions[0].ID, Kind: HTTPStream, Status: 200},
		{SessionID: sessions[3].ID, Kind: SSEGetStream, Status: 200},
		{SessionID: sessions[4].ID, Kind: StdinStream},
	} {
		if err := d.OpenStream(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := d.SummarizeHTTP(ctx, 403, 404)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(HTTPSummary{Modern: 1, Anonymous: 1, Exchanges: 1, Answered: 1}, got); diff != "" {
		t.Errorf("SummarizeHTTP(403, 404) (-want +got):\n%s", diff)
	}
	if got, err := d.SummarizeHTTP(ctx); err != nil || got.Answered != 0 {
		t.Errorf("SummarizeHTTP() = %+v, %v; want no stream counted by status", got, err)
	}
}
