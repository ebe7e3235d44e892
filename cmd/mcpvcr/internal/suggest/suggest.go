// Package suggest finds the name a user probably meant: the command or
// flag closest to one mcpvcr does not know.
package suggest

import "strings"

// Command returns the name of names that name starts, or else the one
// within two edits of name; "" when none is.
func Command(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if strings.HasPrefix(n, name) {
			return n
		}
		if d := Distance(name, n); d < bestD {
			best, bestD = n, d
		}
	}
	return best
}

// Flag returns the flag name of names (as --name) closest to name, if one
// is within two edits of it or starts with it (name of 3 letters or
// more); "" when none is. One-letter names are never suggested.
func Flag(name string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if len(n) < 2 {
			continue
		}
		d := Distance(name, n)
		if strings.HasPrefix(n, name) && len(name) >= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = "--"+n, d
		}
	}
	return best
}

// Distance is the Levenshtein distance between a and b, in bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
