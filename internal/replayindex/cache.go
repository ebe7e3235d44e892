package replayindex

import (
	"context"
	"encoding/binary"

	"github.com/mcpvcr/mcpvcr/store"
)

// Cache is where the index is kept: *store.DB satisfies it.
type Cache interface {
	CacheGet(ctx context.Context, table string, key []byte) ([]byte, bool, error)
	CacheRange(ctx context.Context, table string, prefix []byte, offset, limit int) ([]store.CacheEntry, error)
	CachePut(ctx context.Context, table string, replace bool, entries []store.CacheEntry) error
}

// The cache tables of the hashes and the tree (an exchange index names
// its own).
const (
	hashesTable = "replay index"
	treeTable   = "replay tree"
)

// ClientBit marks the hash of a client frame; a server frame's hash has
// it clear, and 0 stands for no frame (a session that has ended).
const ClientBit = 1 << 63

// RefusedBit marks the hash of a client frame the server refused at the
// HTTP level: it matches only a request of its very shape.
const RefusedBit = 1 << 62

// PutHashes stores the hashes of sessions in mode, by session id,
// replacing those stored before in any mode. Hashes of a session that
// does not exist (deleted meanwhile) are skipped, and they are deleted
// with their session.
func PutHashes(ctx context.Context, c Cache, mode string, hs map[int64][]uint64) error {
	var es []store.CacheEntry
	for id, h := range hs {
		v := appendString(nil, mode)
		for _, x := range h {
			v = binary.LittleEndian.AppendUint64(v, x)
		}
		es = append(es, store.CacheEntry{Key: binary.BigEndian.AppendUint64(nil, uint64(id)), Value: v, Session: id})
	}
	return c.CachePut(ctx, hashesTable, false, es)
}

// Hashes returns the hashes stored in mode, by session id. Sessions
// without hashes in that mode are absent.
func Hashes(ctx context.Context, c Cache, mode string) (map[int64][]uint64, error) {
	es, err := c.CacheRange(ctx, hashesTable, nil, 0, 0)
	if err != nil {
		return nil, err
	}
	out := map[int64][]uint64{}
	for _, e := range es {
		m, rest, ok := readString(e.Value)
		if !ok || m != mode || len(e.Key) != 8 {
			continue
		}
		h := make([]uint64, len(rest)/8)
		for i := range h {
			h[i] = binary.LittleEndian.Uint64(rest[8*i:])
		}
		out[int64(binary.BigEndian.Uint64(e.Key))] = h
	}
	return out, nil
}

// appendString appends s to b, its length first.
func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// readString reads a string appendString wrote at the start of b, and
// returns what follows it.
func readString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}

// readUvarints reads len(dst) uvarints from b into dst.
func readUvarints(b []byte, dst ...*uint64) ([]byte, bool) {
	for _, d := range dst {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return nil, false
		}
		*d, b = v, b[k:]
	}
	return b, true
}
