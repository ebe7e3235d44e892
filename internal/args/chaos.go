package args

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mcpvcr/mcpvcr/chaos"
)

// ParseFaultKinds reads a comma-separated list of chaos fault kinds by
// their names (chaos.FaultKind.String); "" or "all" is every kind
// (nil). An unknown name wraps ErrBadOption and lists the names.
func ParseFaultKinds(s string) ([]chaos.FaultKind, error) {
	if s = strings.TrimSpace(s); s == "" || s == "all" {
		return nil, nil
	}
	var names []string
	for _, k := range chaos.FaultKinds() {
		names = append(names, k.String())
	}
	var ks []chaos.FaultKind
	for _, name := range strings.Split(s, ",") {
		i := slices.Index(names, strings.TrimSpace(name))
		if i < 0 {
			return nil, fmt.Errorf("%w: fault kind %q is not one of %s", ErrBadOption, strings.TrimSpace(name), strings.Join(names, ","))
		}
		if k := chaos.FaultKinds()[i]; !slices.Contains(ks, k) {
			ks = append(ks, k)
		}
	}
	return ks, nil
}
