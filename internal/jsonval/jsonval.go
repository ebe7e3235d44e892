// Package jsonval compares decoded JSON values: it decodes them for
// comparison (numbers as written, the volatile _meta keys of
// mcpwire.VolatileMeta gone), writes numbers by value, keys a value by
// its canonical text (by digest when long), and says where two values
// differ, one path each in the syntax of --ignore and noise paths.
//
// Replay matches and explains its mismatches with it; diff leaves out
// volatile _meta with it. It never changes recorded bytes: it works on
// decoded copies.
package jsonval

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"hash"
	"math/big"
	"strconv"

	"github.com/mcpvcr/mcpvcr/internal/jsonrpc"
	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
)

// Decode decodes raw for comparison: numbers keep their text
// (json.Number), and the volatile _meta keys are removed from an object.
// It returns nil for bytes that are not JSON. One JSON value is decoded
// where it lies (jsonrpc.Decode): a json.Decoder copies raw into a buffer
// grown by doubling first, up to twice a huge frame more. Anything else
// (white space, trailing bytes, deep nesting) is decoded as a
// json.Decoder reads its first value.
func Decode(raw []byte) any {
	v, ok := jsonrpc.Decode(raw)
	if !ok {
		v = decodeFirst(raw)
	}
	if obj, ok := v.(map[string]any); ok {
		DropVolatileMeta(obj)
	}
	return v
}

// decodeFirst decodes the first JSON value of raw with a json.Decoder,
// numbers as json.Number; nil if there is none.
func decodeFirst(raw []byte) any {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	return v
}

// DropVolatileMeta removes from obj's _meta the keys that differ between
// runs of the same conversation (mcpwire.VolatileMeta), and _meta itself
// when nothing else is left in it.
func DropVolatileMeta(obj map[string]any) {
	meta, ok := obj["_meta"].(map[string]any)
	if !ok {
		return
	}
	for _, k := range mcpwire.VolatileMeta {
		delete(meta, k)
	}
	if len(meta) == 0 {
		delete(obj, "_meta")
	}
}

// ByValue rewrites every json.Number in v to one canonical text per
// value, so that 1, 1.0 and 1e0 compare equal, and returns v.
func ByValue(v any) any {
	return Leaves(v, func(leaf any) any {
		x, ok := leaf.(json.Number)
		if !ok {
			return leaf
		}
		s := string(x)
		if _, err := strconv.ParseInt(s, 10, 64); err == nil {
			return x
		}
		f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
		if err != nil {
			return x
		}
		if f.IsInt() {
			i, _ := f.Int(nil)
			return json.Number(i.String())
		}
		return json.Number(f.Text('g', -1))
	})
}

// Leaves replaces every leaf of v, a decoded JSON value (what is neither
// an object nor an array), with fn's result for it, in place, and returns
// v (fn's result when v is a leaf).
func Leaves(v any, fn func(any) any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = Leaves(e, fn)
		}
	case []any:
		for i, e := range x {
			x[i] = Leaves(e, fn)
		}
	default:
		return fn(v)
	}
	return v
}

// KeyTextMax bounds the canonical text a Key holds. A value whose text is
// longer is keyed by the SHA-256 of that text instead, written and hashed
// a chunk at a time (jsonrpc.WriteKey): keying a huge frame then holds no
// copy of it. Two values have the same key exactly when they have the
// same text.
const KeyTextMax = 64 << 10

// Key is the key of v, a decoded JSON value: its canonical text
// (jsonrpc.Key) up to KeyTextMax bytes, else "#sha256:" and the digest of
// that text in hex (no JSON text starts with '#'). It is "" where
// jsonrpc.Key is.
func Key(v any) string {
	w := keyWriter{max: KeyTextMax}
	if jsonrpc.WriteKey(&w, v) != nil {
		return ""
	}
	return w.key()
}

// keyWriter keeps what is written to it while it is at most max bytes,
// then hashes it.
type keyWriter struct {
	max  int
	text []byte
	sum  hash.Hash // once past max
}

func (w *keyWriter) Write(b []byte) (int, error) {
	if w.sum == nil && len(w.text)+len(b) > w.max {
		w.sum = sha256.New()
		w.sum.Write(w.text)
		w.text = nil
	}
	if w.sum != nil {
		return w.sum.Write(b)
	}
	w.text = append(w.text, b...)
	return len(b), nil
}

func (w *keyWriter) key() string {
	if w.sum != nil {
		return "#sha256:" + hex.EncodeToString(w.sum.Sum(nil))
	}
	return string(w.text)
}
