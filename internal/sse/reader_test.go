package sse

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
)

// readAll reads every event from r until an error, which it returns too.
func readAll(t testing.TB, r io.Reader) ([]Event, error) {
	t.Helper()
	rd := NewReader(r)
	var events []Event
	for {
		e, err := rd.Next()
		if err != nil {
			if e.Raw != nil {
				t.Errorf("Next() returned an event with error %v", err)
			}
			if _, err2 := rd.Next(); err2 != err {
				t.Errorf("Next() after error %v = %v; want the same error", err, err2)
			}
			return events, err
		}
		events = append(events, e)
	}
}

// chunkReader returns its stream in random-sized reads.
type chunkReader struct {
	p []byte
	r *rand.Rand
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.p) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), 1+c.r.IntN(16))], c.p)
	c.p = c.p[n:]
	return n, nil
}

func TestReader_Next(t *testing.T) {
	for _, tt := range grammarTests {
		t.Run(tt.name, func(t *testing.T) {
			readers := map[string]io.Reader{
				"Whole":   strings.NewReader(tt.stream),
				"OneByte": iotest.OneByteReader(strings.NewReader(tt.stream)),
				"DataErr": iotest.DataErrReader(strings.NewReader(tt.stream)),
				"Halves":  io.MultiReader(strings.NewReader(tt.stream[:len(tt.stream)/2]), strings.NewReader(tt.stream[len(tt.stream)/2:])),
			}
			for name, r := range readers {
				got, err := readAll(t, r)
				if !errors.Is(err, io.EOF) {
					t.Errorf("%s: Next() error = %v; want io.EOF", name, err)
				}
				if diff := cmp.Diff(tt.want, got, eventOpts); diff != "" {
					t.Errorf("%s: events mismatch (-want +got):\n%s", name, diff)
				}
			}
		})
	}
}

func TestReader_Next_ReadError(t *testing.T) {
	errBroken := errors.New("connection reset")
	r := io.MultiReader(strings.NewReader("data: a\n\ndata: b\n"), iotest.ErrReader(errBroken))
	got, err := readAll(t, r)
	if !errors.Is(err, errBroken) {
		t.Errorf("Next() error = %v; want %v", err, errBroken)
	}
	want := []Event{
		{Raw: b("data: a\n\n"), Data: b("a"), HasData: true, Retry: -1},
		{Raw: b("data: b\n"), Data: b("b"), HasData: true, Retry: -1, Partial: true},
	}
	if diff := cmp.Diff(want, got, eventOpts); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

// stallReader returns its stream, then no bytes and no error for ever.
type stallReader struct{ p []byte }

func (s *stallReader) Read(p []byte) (int, error) {
	n := copy(p, s.p)
	s.p = s.p[n:]
	return n, nil
}

func TestReader_Next_NoProgress(t *testing.T) {
	got, err := readAll(t, &stallReader{p: b(": a")})
	if !errors.Is(err, io.ErrNoProgress) {
		t.Errorf("Next() error = %v; want io.ErrNoProgress", err)
	}
	want := []Event{{Raw: b(": a"), Retry: -1, Comments: bs(" a"), Comment: true, Partial: true}}
	if diff := cmp.Diff(want, got, eventOpts); diff != "" {
		t.Errorf("events mismatch (-want +got):\n%s", diff)
	}
}

func TestReader_Next_Large(t *testing.T) {
	data := bytes.Repeat([]byte("y"), 16<<20)
	stream := append(append([]byte("id: big\ndata:"), data...), "\r\n\r\ndata: next\n\n"...)
	got, err := readAll(t, bytes.NewReader(stream))
	if !errors.Is(err, io.EOF) {
		t.Fatalf("Next() error = %v; want io.EOF", err)
	}
	if len(got) != 2 {
		t.Fatalf("got %d events; want 2", len(got))
	}
	if !bytes.Equal(got[0].Data, data) || got[0].ID != "big" {
		t.Errorf("first event: ID %q, len(Data) %d; want big, %d", got[0].ID, len(got[0].Data), len(data))
	}
	checkRaw(t, stream, got)
}

// FuzzReader checks, for any stream and any way of cutting it into chunks,
// that nothing panics, that the Raw of the events put back together is the
// stream, that Reader, Splitter and the reference parser agree, and that
// WithData with an event's own data gives the event back.
func FuzzReader(f *testing.F) {
	for _, tt := range grammarTests {
		f.Add([]byte(tt.stream), uint64(len(tt.name)))
	}
	for i, s := range crlfStreams {
		f.Add([]byte(s), uint64(i))
	}
	f.Add(benchStream(3, 100), uint64(0))
	f.Fuzz(func(t *testing.T, stream []byte, seed uint64) {
		r := rand.New(rand.NewPCG(seed, seed>>32))
		got, err := readAll(t, bytes.NewReader(stream))
		if !errors.Is(err, io.EOF) {
			t.Fatalf("Next() error = %v; want io.EOF", err)
		}
		checkRaw(t, stream, got)
		if want := whatwg(stream); !sameEvents(want, got) {
			diff := cmp.Diff(want, got, eventOpts)
			t.Fatalf("Reader differs from whatwg (-whatwg +Reader):\n%s", diff)
		}
		cuts := randomCuts(r, len(stream))
		if sp := split(stream, cuts...); !sameEvents(got, sp) {
			diff := cmp.Diff(got, sp, eventOpts)
			t.Fatalf("Splitter with cuts %v differs from Reader (-Reader +Splitter):\n%s", cuts, diff)
		}
		chunked, _ := readAll(t, &chunkReader{p: stream, r: r})
		if !sameEvents(got, chunked) {
			diff := cmp.Diff(got, chunked, eventOpts)
			t.Fatalf("Reader over small reads differs (-whole +chunked):\n%s", diff)
		}
		for i, e := range got {
			if w := e.WithData(e.Data); !sameEvents([]Event{e}, []Event{w}) {
				diff := cmp.Diff(e, w, eventOpts)
				t.Fatalf("event %d: WithData(Data) mismatch (-want +got):\n%s", i, diff)
			}
		}
	})
}
