package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/s2"
)

// noise returns n letters that do not compress.
func noise(n int) string {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = 'a' + byte(r.IntN(26))
	}
	return string(b)
}

// storedPacks returns the first byte of every pack in d, and their bytes
// in all.
func storedPacks(t *testing.T, d *DB) (formats []byte, size int) {
	t.Helper()
	rows, err := d.rdb.Query("SELECT frames FROM frame_packs ORDER BY session_id, first_seq")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		formats = append(formats, b[0])
		size += len(b)
	}
	return formats, size
}

// TestPackZ_ReadsBack: a stream's run of events that repeat themselves is
// stored as a compressed pack, a fraction of its bytes, and reads back as
// the same frames; events that do not compress (long random text, which
// their shared JSON cannot make an eighth shorter) are stored as they
// are.
func TestPackZ_ReadsBack(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		pad        func(i int) string
		compressed bool
	}{
		{"repetitive", func(i int) string { return strings.Repeat("y", 150) }, true},
		{"noise", func(i int) string { return noise(1500 + i) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _, s, st := postSession(t)
			var blocks []string
			for i := range 30 {
				blocks = append(blocks, `event: message`+"\n"+`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`+tc.pad(i)+`"}}`+"\n\n")
			}
			// Two runs in one take of the writer, as under load: one pack.
			n := len(blocks) - 1
			release := holdWriter(t, d)
			for _, run := range []*Frame{
				{SessionID: s.ID, StreamID: st.ID, Seq: 1, Direction: ServerToClient, SSE: true, Raw: []byte(strings.Join(blocks[:n], "")), Events: n},
				{SessionID: s.ID, StreamID: st.ID, Seq: int64(n + 1), Direction: ServerToClient, SSE: true, Raw: []byte(blocks[n]), Events: 1},
			} {
				if err := d.Append(ctx, run); err != nil {
					t.Fatal(err)
				}
			}
			release()
			if err := d.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			formats, size := storedPacks(t, d)
			if len(formats) != 1 || (formats[0] == packCompressed) != tc.compressed {
				t.Fatalf("pack formats %v; want one pack, compressed %t", formats, tc.compressed)
			}
			if raw := len(strings.Join(blocks, "")); tc.compressed && size > raw/10 {
				t.Errorf("a compressed pack of %d bytes of events is %d bytes; want a tenth or less", raw, size)
			}
			fs, err := d.Frames(ctx, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			want := values(eventFrames(s.ID, st.ID, 1, blocks))
			got := fs
			if len(got) != len(want) {
				t.Fatalf("read %d event frames; want %d", len(got), len(want))
			}
			for i := range want {
				if !bytes.Equal(got[i].Raw, want[i].Raw) || !bytes.Equal(got[i].Data, want[i].Data) || got[i].Method != want[i].Method || got[i].Seq != want[i].Seq {
					t.Fatalf("frame %d reads back as %+v; want %+v", i, got[i], want[i])
				}
			}
			if r, err := d.Check(ctx); err != nil || !r.OK() || r.Frames != int64(len(blocks)) {
				t.Errorf("Check() = %+v, %v; want %d frames and nothing wrong", r, err, len(blocks))
			}
		})
	}
}

// TestPackZ_Damaged: a compressed pack whose bytes are damaged, or that
// claims more than any pack holds, reads as a damaged pack, never as
// other frames, and allocates nothing it claims past the bound.
func TestPackZ_Damaged(t *testing.T) {
	pack := append([]byte{packFormat}, bytes.Repeat(appendPacked(nil, &Frame{Direction: ServerToClient, Raw: []byte(`{"jsonrpc":"2.0","method":"m"}`)}), 20)...)
	z, _ := compressPack(nil, pack)
	if z[0] != packCompressed {
		t.Fatalf("a pack of 20 equal frames was not compressed")
	}
	if b, err := decompressPack(z, 20); err != nil || !bytes.Equal(b, pack) {
		t.Fatalf("decompressPack() = %q, %v; want the pack back", b, err)
	}
	n, k := binary.Uvarint(z[1:])
	more := append(binary.AppendUvarint([]byte{packCompressed}, n+1), z[1+k:]...)
	huge := append([]byte{packCompressed}, 0xff, 0xff, 0xff, 0xff, 0x0f)
	flipped := bytes.Clone(z)
	flipped[len(flipped)-3] ^= 0x55
	for name, b := range map[string][]byte{
		"cut":          z[:len(z)-4],
		"flipped":      flipped,
		"claims more":  more,
		"claims 4 GiB": huge,
		"no length":    {packCompressed},
	} {
		err := unpack(1, 1, 20, b, func(*Frame) error { return nil })
		if !errors.Is(err, errBadPack) {
			t.Errorf("%s: unpack() = %v; want %v", name, err, errBadPack)
		}
	}
}

// TestPackZ_Largest: the biggest pack the writer builds, maxPackFrames
// frames of maxPackBytes in all that do not compress, decompresses within
// maxPackDecoded.
func TestPackZ_Largest(t *testing.T) {
	pack := []byte{packFormat}
	for i := range maxPackFrames {
		pad := noise(maxPackBytes/maxPackFrames - 40 + i%2)
		raw := `{"jsonrpc":"2.0","method":"m","params":{"p":"` + pad + `"}}`
		f := &Frame{Direction: ServerToClient, Raw: []byte(raw), Data: []byte(raw + " ")}
		f.Derive(StdoutStream)
		pack = appendPacked(pack, f)
	}
	if len(pack) > maxPackDecoded/4 {
		t.Fatalf("the largest pack is %d bytes; maxPackDecoded (%d) must stay well above it", len(pack), maxPackDecoded)
	}
}

// BenchmarkUnpack reads a pack of a stream's 100 events (one run, as the
// recorder hands them over), stored as it is and compressed: what a
// compressed pack adds to every read of it.
func BenchmarkUnpack(b *testing.B) {
	for _, tc := range []struct {
		name string
		pad  func(i int) string
	}{
		{"repetitive", func(int) string { return strings.Repeat("y", 150) }},
		{"letters", func(i int) string { return noise(150 + i%7) }},
	} {
		var blocks []string
		for i := range 100 {
			blocks = append(blocks, `event: message`+"\n"+`data: {"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"`+tc.pad(i)+`"}}`+"\n\n")
		}
		run := &Frame{Direction: ServerToClient, SSE: true, Raw: []byte(strings.Join(blocks, "")), Events: len(blocks)}
		plain := appendPacked([]byte{packFormat}, run)
		z, _ := compressPack(nil, plain)
		for _, form := range []struct {
			name string
			b    []byte
		}{{"plain", plain}, {"stored", z}} {
			b.Run(tc.name+"/"+form.name, func(b *testing.B) {
				b.SetBytes(int64(len(plain)))
				b.ReportMetric(float64(len(form.b)), "stored-bytes")
				for b.Loop() {
					if err := unpack(1, 1, 100, form.b, func(*Frame) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// bombPack returns a compressed pack of n empty frames: a few bytes that
// decompress to 12 bytes a frame.
func bombPack(n int) []byte {
	body := bytes.Repeat([]byte{0, 0, byte(ServerToClient), 0, byte(KindNotification), 0, 0, 0, 0, 0, 0, 0}, n)
	return append(binary.AppendUvarint([]byte{packCompressed}, uint64(len(body))), s2.Encode(nil, body)...)
}

// TestPackZ_Bomb: a decompression bomb, a pack of a few bytes that
// claims far more frames or bytes than the writer puts in a pack, is
// refused before it is decoded, with an error that names it, and its
// read allocates little whatever it claims.
func TestPackZ_Bomb(t *testing.T) {
	huge := bombPack(599186) // the issue's: 8 MiB of 599,186 frames
	if len(huge) > 64 {
		t.Fatalf("the bomb is %d bytes", len(huge))
	}
	for _, tc := range []struct {
		name        string
		first, last int64
		b           []byte
		want        string
	}{
		{"599,186 frames", 1, 599186, huge, "frames 1 to 599186: damaged pack: a pack claims 599186 frames, and holds at most 33024"},
		{"2 frames of 7 MiB", 5, 6, huge, "a compressed pack of 2 frames claims 7190232 bytes, more than the 133120 such a pack holds"},
		{"more entries than a pack holds", 1, maxPackSeqs, bombPack(maxPackSeqs), "more than the 256 entries a pack holds"},
		{"a negative count", 10, 1, huge, "damaged pack"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			frames := 0
			err := unpack(1, tc.first, tc.last, tc.b, func(*Frame) error { frames++; return nil })
			runtime.ReadMemStats(&m1)
			if !errors.Is(err, errBadPack) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("unpack() = %v; want %v naming %q", err, errBadPack, tc.want)
			}
			if frames > maxPackFrames {
				t.Errorf("unpack() handed over %d frames", frames)
			}
			if got := m1.TotalAlloc - m0.TotalAlloc; got > 2*maxPackDecoded {
				t.Errorf("unpack() allocated %d bytes", got)
			}
		})
	}
}
