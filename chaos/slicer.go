package chaos

import (
	"bytes"
	"time"
	"unicode/utf8"

	"github.com/mcpvcr/mcpvcr/store"
)

// slicer (Toxiproxy's name): one event of a POST's SSE answer sent with
// CRLF line ends, in pieces each written and flushed apart: cut inside
// its first line, between a CR and its LF, inside its data line, and
// inside a multi-byte UTF-8 character where the data has one. An SSE
// parser must put it together again (CR LF is one line end, an event ends
// only at a blank line); the client takes the message and carries on.

// sliceGap is how long apart the pieces of a sliced event are written,
// long enough for each to reach the client in a read of its own.
const sliceGap = 10 * time.Millisecond

func sitesSlicer(rec *store.Recording, st *store.Stream, base Fault, evs []*store.Frame, requests int, cancelled map[int64]*store.Frame) []Fault {
	var out []Fault
	if st.Kind != store.PostStream || !st.SSE() || st.Status != 200 {
		return out
	}
	for e, f := range evs {
		if f.Kind != store.KindEmpty && f.Kind != store.KindInvalid && len(f.Data) > 0 {
			g := base
			g.Event, g.Seq = e, f.Seq
			out = append(out, g)
		}
	}
	return out
}

// slice returns the pieces a slicer sends of the SSE event block raw:
// its lines ended by CR LF, cut inside the first line, between the CR
// and LF that end it, inside the data, and inside a multi-byte UTF-8
// character of the data when it has one.
func slice(raw []byte) [][]byte {
	lines := bytes.Split(bytes.TrimRight(raw, "\r\n"), []byte("\n"))
	var b []byte
	for _, l := range lines {
		b = append(append(b, bytes.TrimSuffix(l, []byte("\r"))...), '\r', '\n')
	}
	b = append(b, '\r', '\n')
	var cuts []int
	first := bytes.IndexByte(b, '\r')
	cuts = append(cuts, max(first/2, 1), first+1) // inside the first line; between its CR and LF
	if d := bytes.Index(b, []byte("data:")); d >= 0 {
		end := d + bytes.IndexByte(b[d:], '\r')
		mid := d + (end-d)/2
		for i := d; i < end; {
			r, n := utf8.DecodeRune(b[i:])
			if n > 1 && r != utf8.RuneError {
				mid = i + 1 // inside the character
				break
			}
			i += n
		}
		cuts = append(cuts, mid)
	}
	var pieces [][]byte
	at := 0
	for _, c := range cuts {
		if c > at && c < len(b) {
			pieces = append(pieces, b[at:c])
			at = c
		}
	}
	return append(pieces, b[at:])
}

// judgeSlicer judges a client sent a sliced event: it carried on without
// sending the request again: pass; it sent it again (it did not put the
// event together), or nothing more where the recorded client went on:
// fail; the event not written whole (the client left first): not
// observed.
func judgeSlicer(inj *injection, mine []chaosAction) (string, Verdict) {
	return judgeTook(inj, mine, "sliced event", "it did not put the sliced event together")
}

// reframe (SSE framing): the SSE event block raw with each line ended by
// a lone CR, as the SSE format allows (CR LF, LF and CR each end a
// line), and its data, where it is a JSON object or array, split after
// its first { or [ into two data: lines: a parser joins them with a line
// feed, which JSON takes as whitespace, so the message is the recorded
// one. A parser that ends lines only at LF sees no line end at all.
func reframe(raw []byte) []byte {
	var out []byte
	for _, l := range bytes.Split(bytes.TrimRight(raw, "\r\n"), []byte("\n")) {
		l = bytes.TrimSuffix(l, []byte("\r"))
		if v, ok := bytes.CutPrefix(l, []byte("data:")); ok {
			v = bytes.TrimPrefix(v, []byte(" "))
			if len(v) > 1 && (v[0] == '{' || v[0] == '[') {
				out = append(out, "data: "...)
				out = append(out, v[0], '\r')
				l = append([]byte("data: "), v[1:]...)
			}
		}
		out = append(append(out, l...), '\r')
	}
	return append(out, '\r')
}
