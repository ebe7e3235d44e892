package store

import (
	"bytes"
	"context"
	"testing"
)

// TestBlobIO_Handle: the writer reaches go-sqlite3's handle, so that big
// frames are written in pieces (blobio.go); a go-sqlite3 that moved it
// would fall back to binding the bytes, silently but for memory.
func TestBlobIO_Handle(t *testing.T) {
	d, _ := httpSession(t)
	c, err := d.rdb.Conn(context.Background()) // the writer holds wdb's one connection
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Raw(func(dc any) error {
		if sqliteHandle(dc) == nil {
			t.Error("no SQLite handle in go-sqlite3's connection")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if sqliteHandle(struct{}{}) != nil {
		t.Error("a handle from something that is no connection")
	}
}

// TestBlobIO_BigFramesReadBack: frames longer than bigRaw, written into
// their rows in pieces, read back byte for byte with their other columns.
func TestBlobIO_BigFramesReadBack(t *testing.T) {
	ctx := context.Background()
	d, s := httpSession(t)
	st := &Stream{SessionID: s.ID, Kind: PostStream, Method: "POST"}
	if err := d.OpenStream(ctx, st); err != nil {
		t.Fatal(err)
	}
	pad := bytes.Repeat([]byte("0123456789abcdef"), (bigRaw+3*blobPiece+5)/16)
	req := append(append([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"t":"`), pad...), `"}}`...)
	cut := append([]byte(`{"jsonrpc":"2.0","id":1,"result":{"t":"`), pad...)
	event := append(append([]byte("data: {\"jsonrpc\":\"2.0\",\"method\":\"n\",\"params\":{\"t\":\""), pad...), "\"}}\ndata: x\n\n"...)
	fs := []*Frame{
		{Raw: req, Direction: ClientToServer},
		{Raw: cut, Direction: ServerToClient, Oversize: int64(len(cut)) + 1000},
		{Raw: event, Direction: ServerToClient, SSE: true, Data: append(append([]byte(`{"jsonrpc":"2.0","method":"n","params":{"t":"`), pad...), "\"}}\nx"...)},
	}
	for i, f := range fs {
		f.SessionID, f.StreamID, f.Seq, f.Retry = s.ID, st.ID, int64(i+1), -1
		f.Derive(st.Kind)
		if err := d.Append(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	got, err := d.Frames(ctx, s.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(fs) {
		t.Fatalf("%d frames read; want %d", len(got), len(fs))
	}
	for i, f := range fs {
		g := got[i]
		if !bytes.Equal(g.Raw, f.Raw) || !bytes.Equal(g.Data, f.Data) || g.Oversize != f.Oversize || g.Kind != f.Kind || g.ID != f.ID || g.Method != f.Method || g.SSE != f.SSE {
			t.Errorf("frame %d: read %d raw bytes, %d data, oversize %d, %s %s %q; want %d, %d, %d, %s %s %q", i+1,
				len(g.Raw), len(g.Data), g.Oversize, g.Kind, g.ID, g.Method, len(f.Raw), len(f.Data), f.Oversize, f.Kind, f.ID, f.Method)
		}
	}
}
