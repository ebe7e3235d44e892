package store

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/klauspost/compress/s2"
)

// Compressed packs (migration 9 in schema.sql). The bytes a pack holds
// are most of what the writer hands SQLite, and SQLite's cost of a pack
// follows its bytes: it copies them into pages, into the write-ahead
// log, and into the file again at a checkpoint. The frames of a run
// share most of theirs (a stream's events differ in a counter and a few
// words), so a pack is stored compressed when that makes it smaller by
// at least an eighth:
//
//	packCompressed  1 byte
//	length          uvarint  the length of the pack's bytes after packFormat
//	block           an S2 block of those bytes
//
// A read decompresses it into packFormat and those bytes, and decodes
// that as any pack. S2 (github.com/klauspost/compress/s2) compresses at
// several GB/s on repetitive input and about 1 GB/s on JSON-RPC traffic,
// a few µs for a pack of a hundred events, where SQLite spent tens on
// the bytes it saves.

// packCompressed is the first byte of a compressed pack.
const packCompressed = 2

// compressedVersion is the schema version from which packs may be
// compressed: a build that cannot read them refuses the file as newer.
const compressedVersion = 9

// minCompressed is the length below which a pack is stored as it is: the
// saving would not pay for the call.
const minCompressed = 256

// compressPack returns pack (packFormat and its frames) as a compressed
// pack, built in dst, or pack itself when that would not be an eighth
// smaller. It returns dst's buffer for reuse.
func compressPack(dst, pack []byte) (stored, buf []byte) {
	if len(pack) < minCompressed {
		return pack, dst
	}
	body := pack[1:]
	head := binary.AppendUvarint(append(dst[:0], packCompressed), uint64(len(body)))
	room := slices.Grow(head, s2.MaxEncodedLen(len(body)))
	z := room[:len(head)+len(s2.Encode(room[len(head):cap(room)], body))]
	if len(z) > len(pack)-len(pack)/8 {
		return pack, z
	}
	return z, z
}

// decompressPack returns the bytes of pack b, decompressed when it is a
// compressed pack of seqs frames; the result may alias b. It fails with
// errBadPack, before it decompresses anything, when b claims more bytes
// than a pack of seqs frames holds (maxPackDecoded, maxSeqDecoded per
// frame), and when b does not decompress into exactly the length it
// claims.
func decompressPack(b []byte, seqs int64) ([]byte, error) {
	if len(b) == 0 || b[0] != packCompressed {
		return b, nil
	}
	n, k := binary.Uvarint(b[1:])
	limit := uint64(min(maxPackDecoded, seqs*maxSeqDecoded))
	if k <= 0 || n > limit {
		return nil, fmt.Errorf("%w: a compressed pack of %d frames claims %d bytes, more than the %d such a pack holds", errBadPack, seqs, n, limit)
	}
	block := b[1+k:]
	if m, err := s2.DecodedLen(block); err != nil || uint64(m) != n {
		return nil, fmt.Errorf("%w: a compressed pack of %d bytes does not hold them", errBadPack, n)
	}
	out := make([]byte, 1+n)
	out[0] = packFormat
	if _, err := s2.Decode(out[1:], block); err != nil {
		return nil, fmt.Errorf("%w: %v", errBadPack, err)
	}
	return out, nil
}
