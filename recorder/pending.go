package recorder

import (
	"fmt"
	"sort"
	"strings"
)

// Pending says what a stopping h waits for: "2 open streams (1 get,
// 1 post)", or "" when none is open: what the mcpvcr command says it waits for when it stops.
func (h *HTTP) Pending() string {
	n, kinds := 0, []string{}
	for k, c := range h.OpenStreams() {
		n += c
		kinds = append(kinds, fmt.Sprintf("%d %s", c, k))
	}
	if n == 0 {
		return ""
	}
	sort.Strings(kinds)
	word := "streams"
	if n == 1 {
		word = "stream"
	}
	return fmt.Sprintf("%d open %s (%s)", n, word, strings.Join(kinds, ", "))
}
