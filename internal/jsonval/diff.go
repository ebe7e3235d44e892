package jsonval

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Diff is one place where two JSON values differ: its path, the value of
// each side there, and whether each side is there at all.
type Diff struct {
	Path     string
	A, B     any
	AIn, BIn bool
}

// Diffs walks a and b, decoded JSON, and returns where they differ, at
// most max places, in key order. Paths start with prefix (a root key
// without its leading dot when prefix is ""). Objects are compared key by
// key and arrays of the same length element by element; anything else
// differs when its Key does, so that null and absent are alike, as
// matching has them.
func Diffs(a, b any, prefix string, max int) []Diff {
	var out []Diff
	var walk func(a, b any, aIn, bIn bool, p string)
	walk = func(a, b any, aIn, bIn bool, p string) {
		if len(out) >= max {
			return
		}
		am, aok := a.(map[string]any)
		bm, bok := b.(map[string]any)
		if aok && bok {
			keys := make([]string, 0, len(am)+len(bm))
			for k := range am {
				keys = append(keys, k)
			}
			for k := range bm {
				if _, dup := am[k]; !dup {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				av, aIn := am[k]
				bv, bIn := bm[k]
				walk(av, bv, aIn, bIn, join(p, k))
			}
			return
		}
		al, aok := a.([]any)
		bl, bok := b.([]any)
		if aok && bok && len(al) == len(bl) {
			for i := range al {
				walk(al[i], bl[i], true, true, fmt.Sprintf("%s[%d]", p, i))
			}
			return
		}
		if Key(a) != Key(b) {
			out = append(out, Diff{p, a, b, aIn, bIn})
		}
	}
	walk(a, b, true, true, prefix)
	return out
}

// Paths returns the paths of Diffs(a, b, prefix, max).
func Paths(a, b any, prefix string, max int) []string {
	var out []string
	for _, d := range Diffs(a, b, prefix, max) {
		out = append(out, d.Path)
	}
	return out
}

// Text describes how b differs from a for people: one line per differing
// path (see Diffs) with the recorded (-) and the live (+) value as JSON
// (Shown), and "… and more" past max paths.
func Text(a, b any, prefix string, max int) string {
	var w strings.Builder
	for i, d := range Diffs(a, b, prefix, max+1) {
		if i == max {
			w.WriteString("… and more\n")
			break
		}
		fmt.Fprintf(&w, "%s\n  - %s\n  + %s\n", d.Path, Shown(d.A, d.AIn), Shown(d.B, d.BIn))
	}
	return w.String()
}

// Shown is v as JSON, cut short past 200 bytes, or "(absent)" when it is
// not there.
func Shown(v any, there bool) string {
	if !there {
		return "(absent)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "?"
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

// PathKey writes one key of a path: .key, or ["key"] when it is empty or
// holds characters the dotted form cannot.
func PathKey(k string) string {
	plain := k != ""
	for _, c := range k {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			plain = false
		}
	}
	if plain {
		return "." + k
	}
	b, _ := json.Marshal(k)
	return "[" + string(b) + "]"
}

// join is path p with key k, without a leading dot at the root.
func join(p, k string) string {
	if p == "" {
		return strings.TrimPrefix(PathKey(k), ".")
	}
	return p + PathKey(k)
}
