#!/usr/bin/env bash
# Run the official MCP conformance suite's client scenarios that need no
# authorization (initialize, tools_call, elicitation-sep1034-client-defaults,
# sse-retry) against the TypeScript SDK client of node_modules
# (internal/mcptest/testdata/tsclient/conformance.mjs) and the Go SDK's
# conformance client (go.mod's version), and print one line per client and
# scenario: the suite's verdict. docs/probes.md puts them beside the probes'.
#
# The suite is installed into a temporary directory with npm, not into this
# repository's package.json: nothing in make test needs it. It is built for
# node 22 (it imports fs.globSync at load); on an older node a loader hook
# gives it an fs with a globSync that throws, which no client scenario calls.
set -euo pipefail
cd "$(dirname "$0")/.."
suite=@modelcontextprotocol/conformance@${CONFORMANCE_VERSION:-0.1.16}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

npm install --prefix "$dir" --no-audit --no-fund --loglevel=error "$suite" >/dev/null
cat >"$dir/fsshim.mjs" <<'JS'
export * from "node:fs";
import fs from "node:fs";
export default fs;
export function globSync() { throw new Error("fs.globSync is not available on this node"); }
JS
cat >"$dir/hook.mjs" <<'JS'
export async function resolve(specifier, context, next) {
  if ((specifier === "fs" || specifier === "node:fs") && context.parentURL?.includes("/conformance/dist/")) {
    return { url: new URL("./fsshim.mjs", import.meta.url).href, shortCircuit: true };
  }
  return next(specifier, context);
}
JS
echo 'import { register } from "node:module"; register("./hook.mjs", import.meta.url);' >"$dir/register.mjs"
go build -o "$dir/go-client" github.com/modelcontextprotocol/go-sdk/conformance/everything-client

echo "suite $suite, node $(node --version)"
for client in "TypeScript SDK $(node -p 'require("./node_modules/@modelcontextprotocol/sdk/package.json").version')=node $PWD/internal/mcptest/testdata/tsclient/conformance.mjs" \
  "Go SDK $(go list -m -f '{{.Version}}' github.com/modelcontextprotocol/go-sdk)=$dir/go-client"; do
  name=${client%%=*} command=${client#*=}
  for scenario in initialize tools_call elicitation-sep1034-client-defaults sse-retry; do
    out=$( (cd "$dir" && node --import ./register.mjs node_modules/@modelcontextprotocol/conformance/dist/index.js \
      client --command "$command" --scenario "$scenario") 2>&1 | sed 's/\x1b\[[0-9;]*m//g' || true)
    echo "$name | $scenario | $(grep -E '^Passed:' <<<"$out" || echo 'no result') | $(grep -oE 'OVERALL: [A-Z]+' <<<"$out" || true)"
  done
done
