package sse

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestAppendEvent(t *testing.T) {
	tests := []struct {
		name  string
		id    string
		typ   string
		data  []byte
		retry int
		want  string
	}{
		{name: "Data", data: b(`{"a":1}`), retry: -1, want: "data: {\"a\":1}\n\n"},
		{name: "AllFields", id: "7", typ: "message", data: b("x"), retry: 500, want: "event: message\nid: 7\nretry: 500\ndata: x\n\n"},
		{name: "PrimingEvent", id: "0", data: b(""), retry: -1, want: "id: 0\ndata: \n\n"},
		{name: "NilDataNoDataLine", id: "0", retry: 0, want: "id: 0\nretry: 0\n\n"},
		{name: "MultiLineData", data: b("a\nb\r\nc\rd"), retry: -1, want: "data: a\ndata: b\ndata: c\ndata: d\n\n"},
		{name: "TrailingLineBreak", data: b("a\n"), retry: -1, want: "data: a\ndata: \n\n"},
		{name: "LeadingSpaceKept", data: b(" a"), retry: -1, want: "data:  a\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := AppendEvent([]byte("prefix"), tt.id, tt.typ, tt.data, tt.retry)
			if got, want := string(out), "prefix"+tt.want; got != want {
				t.Errorf("AppendEvent(%q, %q, %q, %d) = %q; want %q", tt.id, tt.typ, tt.data, tt.retry, got, want)
			}
			// It must read back as what was written.
			evs := split([]byte(tt.want))
			if len(evs) != 1 {
				t.Fatalf("AppendEvent output parses to %d events; want 1", len(evs))
			}
			e := evs[0]
			wantData := bytes.ReplaceAll(bytes.ReplaceAll(tt.data, b("\r\n"), b("\n")), b("\r"), b("\n"))
			if e.ID != tt.id || e.Type != tt.typ || e.Retry != max(tt.retry, -1) ||
				e.HasData != (tt.data != nil) || !bytes.Equal(e.Data, wantData) || e.Partial {
				t.Errorf("AppendEvent output reads back as %+v", e)
			}
		})
	}
}

func TestEncode(t *testing.T) {
	tests := []struct {
		name string
		e    Event
		want string
	}{
		{
			name: "RawVerbatim",
			e:    Event{Raw: b("data:x\r\r"), ID: "ignored", HasID: true, Retry: -1},
			want: "data:x\r\r",
		},
		{
			name: "PartialRawVerbatim",
			e:    Event{Raw: b("data: cut"), Partial: true, Retry: -1},
			want: "data: cut",
		},
		{
			name: "Fields",
			e:    Event{ID: "1", HasID: true, Type: "message", Data: b("a\nb"), HasData: true, Retry: 10, Comments: bs(" c")},
			want: ": c\nevent: message\nid: 1\nretry: 10\ndata: a\ndata: b\n\n",
		},
		{
			name: "EmptyIDResets",
			e:    Event{HasID: true, Retry: -1},
			want: "id: \n\n",
		},
		{
			name: "CommentOnly",
			e:    Event{Comments: bs(""), Comment: true, Retry: -1},
			want: ":\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := Encode(&buf, tt.e); err != nil {
				t.Fatalf("Encode() error = %v", err)
			}
			if got, want := buf.String(), tt.want; got != want {
				t.Errorf("Encode() wrote %q; want %q", got, want)
			}
		})
	}
}

func TestEncode_LineBreak(t *testing.T) {
	tests := []struct {
		name string
		e    Event
	}{
		{"ID", Event{ID: "a\nb", HasID: true, Retry: -1}},
		{"Type", Event{Type: "a\rb", Retry: -1}},
		{"Comment", Event{Comments: bs("a\nb"), Retry: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := Encode(&buf, tt.e)
			if !errors.Is(err, ErrLineBreak) {
				t.Errorf("Encode() error = %v; want ErrLineBreak", err)
			}
			if buf.Len() != 0 {
				t.Errorf("Encode() wrote %q; want nothing", buf.String())
			}
		})
	}
}

func TestEvent_WithData(t *testing.T) {
	tests := []struct {
		name string
		raw  string
		data []byte
		want string
	}{
		{
			name: "RewriteID",
			raw:  "event: message\r\nid: e5\r\nretry: 100\r\ndata: {\"id\":1,\"result\":{}}\r\n: tail\r\n\r\n",
			data: b(`{"id":"live-9","result":{}}`),
			want: "event: message\r\nid: e5\r\nretry: 100\r\ndata: {\"id\":\"live-9\",\"result\":{}}\r\n: tail\r\n\r\n",
		},
		{
			name: "KeepsNoSpaceStyle",
			raw:  "data:{\"id\":1}\n\n",
			data: b(`{"id":2}`),
			want: "data:{\"id\":2}\n\n",
		},
		{
			name: "SameLineCountKeepsInterleaving",
			raw:  "data: a\nid: 1\ndata:b\r\n\r\n",
			data: b("A\nB"),
			want: "data: A\nid: 1\ndata:B\r\n\r\n",
		},
		{
			name: "MoreLinesFollowLastDataLine",
			raw:  "data: a\nid: 1\n\n",
			data: b("x\ny\nz"),
			want: "data: x\ndata: y\ndata: z\nid: 1\n\n",
		},
		{
			name: "FewerLinesDropTheRest",
			raw:  "data: a\ndata: b\nid: 1\ndata: c\n\n",
			data: b("x"),
			want: "data: x\nid: 1\n\n",
		},
		{
			name: "NoDataLineInsertedBeforeBlankLine",
			raw:  "id: 0\r\nretry: 5\r\n\r\n",
			data: b("{}"),
			want: "id: 0\r\nretry: 5\r\ndata: {}\r\n\r\n",
		},
		{
			name: "NilRemovesData",
			raw:  "id: 0\ndata: a\ndata: b\n\n",
			data: nil,
			want: "id: 0\n\n",
		},
		{
			name: "EmptyData",
			raw:  "id: 0\ndata: a\n\n",
			data: b(""),
			want: "id: 0\ndata: \n\n",
		},
		{
			name: "LeadingSpaceNeedsSpace",
			raw:  "data:a\ndata\n\n",
			data: b(" x\n y"),
			want: "data:  x\ndata:  y\n\n",
		},
		{
			name: "ColonAdded",
			raw:  "data\n\n",
			data: b("x"),
			want: "data:x\n\n",
		},
		{
			name: "BOMKept",
			raw:  "\uFEFFdata: a\n\n",
			data: b("b"),
			want: "\uFEFFdata: b\n\n",
		},
		{
			name: "PartialUnterminated",
			raw:  "id: 1\ndata: a",
			data: b("b\nc"),
			want: "id: 1\ndata: b\ndata: c",
		},
		{
			name: "PartialWithoutData",
			raw:  "id: 1",
			data: b("b"),
			want: "id: 1\ndata: b\n",
		},
		{
			name: "CommentBecomesEvent",
			raw:  ": ping\n\n",
			data: b("x"),
			want: ": ping\ndata: x\n\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := split([]byte(tt.raw))
			if len(evs) != 1 {
				t.Fatalf("%q parses to %d events; want 1", tt.raw, len(evs))
			}
			e := evs[0]
			got := e.WithData(tt.data)
			if got, want := string(got.Raw), tt.want; got != want {
				t.Errorf("WithData(%q).Raw = %q; want %q", tt.data, got, want)
			}
			want := split([]byte(tt.want))[0]
			want.Partial = e.Partial
			want.BOM = e.BOM
			if diff := cmp.Diff(want, got, eventOpts); diff != "" {
				t.Errorf("WithData(%q) mismatch (-want +got):\n%s", tt.data, diff)
			}
			if !e.Partial && !bytes.Equal(got.Data, bytes.ReplaceAll(tt.data, b("\r\n"), b("\n"))) {
				t.Errorf("WithData(%q).Data = %q", tt.data, got.Data)
			}
		})
	}
}

func TestEvent_WithData_Identity(t *testing.T) {
	for _, s := range chunkStreams() {
		for _, e := range split([]byte(s)) {
			if diff := cmp.Diff(e, e.WithData(e.Data), eventOpts); diff != "" {
				t.Errorf("%q: WithData(Data) mismatch (-want +got):\n%s", strings.ToValidUTF8(string(e.Raw), "?"), diff)
			}
		}
	}
}
