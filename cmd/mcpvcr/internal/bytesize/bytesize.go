// Package bytesize is the value of a size flag such as --max-frame.
package bytesize

import (
	"fmt"
	"strconv"
	"strings"
)

// Size is a number of bytes, set from a number with an optional unit (KB,
// MB, GB in powers of 1000; KiB, MiB, GiB, K, M, G in powers of 1024; B).
// Units are case-insensitive. *Size is a flag.Value.
type Size int64

var units = []struct {
	suffix string
	n      int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30},
	{"b", 1},
}

// Set parses v: a positive size of at most 1 TiB.
func (s *Size) Set(v string) error {
	t := strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range units {
		if rest, ok := strings.CutSuffix(t, u.suffix); ok {
			t, mult = strings.TrimSpace(rest), u.n
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return fmt.Errorf("%q is not a size: give bytes, or a number with KB, MB, KiB or MiB (such as 64MiB)", v)
	}
	*s = Size(n * mult)
	return nil
}

// String writes s in MiB or KiB when it is a whole number of them.
func (s *Size) String() string {
	switch n := int64(*s); {
	case n > 0 && n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n > 0 && n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	default:
		return strconv.FormatInt(n, 10)
	}
}

// Of returns the bytes of v, a flag's value, when it is a *Size; 0
// otherwise.
func Of(v any) int64 {
	if s, ok := v.(*Size); ok {
		return int64(*s)
	}
	return 0
}
