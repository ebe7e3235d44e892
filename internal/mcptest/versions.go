package mcptest

import (
	"slices"

	"github.com/mcpvcr/mcpvcr/internal/mcpwire"
)

// Protocol revisions, oldest first: mcpwire's, named here for tests.
const (
	V20241105 = mcpwire.V20241105
	V20250326 = mcpwire.V20250326
	V20250618 = mcpwire.V20250618
	V20251125 = mcpwire.V20251125
	V20260728 = mcpwire.V20260728
)

// Versions lists the protocol revisions the SDK speaks, oldest first. The
// first four are the legacy era (initialize handshake); 2026-07-28 is the
// modern era (server/discover, per-request _meta, multi round-trip
// requests). Tests range over it; do not modify it.
var Versions = []string{V20241105, V20250326, V20250618, V20251125, V20260728}

// Modern reports whether version belongs to the modern (2026-07-28 and
// later) era. Revisions are dates, so they compare as strings.
func Modern(version string) bool { return version >= V20260728 }

func knownVersion(v string) bool { return slices.Contains(Versions, v) }
