#!/usr/bin/env bash
# Make the npm test peers (@modelcontextprotocol/server-everything, and
# @microsoft/jest-sarif for the SARIF 2.1.0 schema, @modelcontextprotocol/inspector
# for its CLI; pinned in
# package-lock.json) present for make test: install them with npm ci when one
# is missing and npm exists; without npm, say which tests skip (or fail,
# with MCPVCR_REQUIRE_PEERS=1) for want of them.
set -euo pipefail
cd "$(dirname "$0")/.."

peer=node_modules/@modelcontextprotocol/server-everything
[ -d "$peer" ] && [ -d node_modules/@microsoft/jest-sarif ] && [ -d node_modules/@modelcontextprotocol/inspector ] && exit 0

if command -v npm >/dev/null 2>&1; then
  echo "make test: $peer is missing; installing it with npm ci"
  exec npm ci --no-audit --no-fund --loglevel=error
fi

echo "make test: npm is not installed, so $peer is missing."
echo "make test: these tests need it and will skip (fail with MCPVCR_REQUIRE_PEERS=1):"
# Every test function that starts the reference server.
find . -name '*_test.go' -not -path './node_modules/*' -print0 |
  xargs -0 awk '/^func Test/ { name = $2; sub(/\(.*/, "", name); rec = 0 }
    /if \*recassette/ { rec = 1 }   # re-recording (make recassette) is not make test
    /^\t}$/ { rec = 0 }
    /Everything(HTTP)?\((t|tb)[,)]/ && name != "" && !rec { dir = FILENAME; sub("/[^/]*$", "", dir); print "  " dir " " name; name = "" }' |
  sort -u
