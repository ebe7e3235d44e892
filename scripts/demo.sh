#!/usr/bin/env bash
# make demo: record a real MCP session against a bundled server (the Go SDK
# test server), show its timeline, replay it to the same real client,
# check the client saw identical results, and write the session's HTML
# report. The last line printed puts bin/mcpvcr on PATH. Needs Go with cgo
# (gcc); no network.
set -euo pipefail
cd "$(dirname "$0")/.."
out=demo
rm -rf "$out" && mkdir -p "$out"
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# took runs a build and says how long it took.
took() { local t0=$SECONDS; "$@"; echo "   ... took $((SECONDS - t0)) s"; }

say "Building mcpvcr into bin/, the bundled MCP server (Go SDK v1.8.0) and a real MCP client"
if [ ! -x bin/mcpvcr ]; then
  echo "   a first build compiles SQLite with cgo: up to 3 to 4 minutes on two cores, silently; later builds take seconds"
fi
echo "   mcpvcr (make build: bin/mcpvcr, stamped with its version and commit)"
took make -s build
echo "   the MCP server and the client"
peers() {
  go build -o "$out/server" ./internal/mcptest/testserver
  go build -o "$out/client" ./internal/mcptest/democlient
}
took peers
ln -sf ../bin/mcpvcr "$out/mcpvcr"
export MCPVCR_CASSETTE="$out/demo.db"

say "1. Record: the client runs 'mcpvcr record -- server' as its MCP server command"
"$out/client" -out "$out/live.json" -- "$out/mcpvcr" record --name demo -- "$out/server" 2>"$out/record.stderr"

say "2. The cassette: $MCPVCR_CASSETTE"
"$out/mcpvcr" ls

say "3. The session's timeline (first 25 lines of 'mcpvcr show 1')"
# Through a file, not a pipe into head: head leaving early would end
# mcpvcr with SIGPIPE, which pipefail reports as a failure.
"$out/mcpvcr" show 1 >"$out/show.txt"
head -25 "$out/show.txt"
echo "   ... ($(wc -l <"$out/show.txt") lines in all)"

say "4. Replay: the same client, now against 'mcpvcr replay --stdio' (no server running)"
"$out/client" -compare "$out/live.json" -- "$out/mcpvcr" replay 1 --stdio 2>"$out/replay.stderr"
cat "$out/replay.stderr"

say "5. Export for review (the text form cassettes/ commits)"
"$out/mcpvcr" export 1 -o "$out/demo.jsonl"
echo "   $out/demo.jsonl: $(wc -l <"$out/demo.jsonl") lines, $(wc -c <"$out/demo.jsonl") bytes"

say "6. The bug-report view: one self-contained HTML file, and HAR for browser DevTools"
"$out/mcpvcr" export 1 --format har -o "$out/demo.har"
echo "   $out/demo.har: $(wc -c <"$out/demo.har") bytes (DevTools: Network panel, Import HAR file)"
"$out/mcpvcr" export 1 --format html -o "$out/report.html"
echo "   $out/report.html: $(wc -c <"$out/report.html") bytes, no network needed (or: mcpvcr view 1)"

say "Done"
cat <<MSG
mcpvcr recorded one real MCP session (tools, resources, prompts, progress, logging,
sampling, elicitation, roots and a cancellation) into $MCPVCR_CASSETTE, then replayed it
offline to the same client, which got identical results.
The HTML report of the session (open it in any browser):
  $(cd "$out" && pwd)/report.html
Try it yourself:
  mcpvcr show 1 --cassette $MCPVCR_CASSETTE
  mcpvcr replay 1 --stdio --cassette $MCPVCR_CASSETTE   # as your client's server command
mcpvcr is bin/mcpvcr; to run it as mcpvcr, as the README does, put it on your PATH
(or: go install ./cmd/mcpvcr):
MSG
# The last line: what to paste.
echo "  export PATH=\"$PWD/bin:\$PATH\""
