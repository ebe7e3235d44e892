#!/usr/bin/env bash
# Run every fuzz target in the module for FUZZTIME each (default 10s).
#
#   scripts/fuzz.sh [FUZZTIME] [PATTERN]
#
# go test -fuzz runs one target per invocation, so this loops over the
# targets, found as "func FuzzXxx" in *_test.go files; PATTERN (a grep -E
# regexp) keeps only the targets whose package/name matches it. A failing
# input is written by go test to <package>/testdata/fuzz/<Target>/<hash>,
# where every later go test runs it as a regression seed: review it, fix
# the bug, and commit the file with the fix. The script goes on with the
# other targets and exits 1 if any failed, listing the new seeds.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${1:-10s}"
pattern="${2:-.}"
export CGO_ENABLED=1

# Coverage in the cgo-backed packages (store, replayer) is not
# deterministic: background goroutines (the store's writer and
# checkpointer, replay's writer) run a little differently each time. Go's
# fuzzer then takes nearly every input for new coverage and minimizes it
# for up to 60 s by default, which stalls the run; a bounded number of
# minimization runs keeps it fuzzing.
minimize="${FUZZMINIMIZE:-100x}"

targets=$(grep -rE --include='*_test.go' -l '^func Fuzz[A-Z0-9_]' . |
	grep -v -e '^./node_modules/' -e '/testdata/' |
	while read -r file; do
		dir=$(dirname "$file")
		grep -oE '^func Fuzz[A-Za-z0-9_]*' "$file" | sed "s|^func |$dir |"
	done | sort -u | grep -E -- "$pattern" || true)

if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz targets match $pattern" >&2
	exit 1
fi

before=$(find . -path ./node_modules -prune -o -path '*/testdata/fuzz/*' -type f -print | sort)
failed=()
while read -r dir name; do
	echo "== $dir $name ($fuzztime)"
	log=$(mktemp)
	if ! go test -run='^$' -fuzz="^${name}\$" -fuzztime="$fuzztime" -fuzzminimizetime="$minimize" "$dir" 2>&1 | tee "$log"; then
		# go test's fuzzer sometimes ends a run with "context deadline
		# exceeded" when the time runs out while it is still minimizing an
		# interesting input: no failing input, nothing written. That is the
		# tool's timeout, not a crash; anything else is a failure.
		if grep -q 'context deadline exceeded' "$log" && ! grep -q 'Failing input written' "$log"; then
			echo "fuzz.sh: $dir $name: the fuzzer ran out of time while minimizing (no failing input); not a failure"
		else
			failed+=("$dir $name")
		fi
	fi
	rm -f "$log"
done <<<"$targets"

after=$(find . -path ./node_modules -prune -o -path '*/testdata/fuzz/*' -type f -print | sort)
new=$(comm -13 <(echo "$before") <(echo "$after") || true)
if [ -n "$new" ]; then
	echo
	echo "fuzz.sh: new regression seeds (review, fix, commit with the fix):"
	echo "$new" | sed 's/^/  /'
fi
if [ "${#failed[@]}" -gt 0 ]; then
	echo
	echo "fuzz.sh: failing targets:" >&2
	printf '  %s\n' "${failed[@]}" >&2
	exit 1
fi
echo "fuzz.sh: all $(echo "$targets" | wc -l) targets passed ($fuzztime each)"
