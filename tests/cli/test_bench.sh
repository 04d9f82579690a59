#!/usr/bin/env bash
# `migsched bench --quick` runs and prints its tables (placement, decisions
# through ms_sched, migration search, queue depth, simulation) and
# valid-looking JSON. Never asserts times.
set -eu
MIGSCHED=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$MIGSCHED" bench --quick --json "$tmp/bench.json" >"$tmp/out.txt"
cat "$tmp/out.txt"

grep -q '^Placement: one decision' "$tmp/out.txt"
grep -Eq '^best-fit +bucket +100 ' "$tmp/out.txt"
grep -Eq '^best-fit +scan +100 ' "$tmp/out.txt"
grep -Eq '^fa-nomig +bucket +1000 ' "$tmp/out.txt"
grep -q '^Migration search: fa' "$tmp/out.txt"
grep -Eq ' on_finish ' "$tmp/out.txt"
grep -q '^Queue depth: ' "$tmp/out.txt"
grep -Eq '^fa\+ +200 +0 ' "$tmp/out.txt"
grep -Eq '^best-fit +200 +1000 ' "$tmp/out.txt"
grep -q '^Simulation: ' "$tmp/out.txt"
grep -Eq '^fa\+ +1\.20 +5000 ' "$tmp/out.txt"
grep -q '^scaling: ' "$tmp/out.txt"
! grep -q 'failed' "$tmp/out.txt"

# JSON: one object with a results array holding every section
head -c 1 "$tmp/bench.json" | grep -q '{'
for sec in place migration queue simulate scaling; do
    grep -q "\"section\": \"$sec\"" "$tmp/bench.json"
done
if command -v python3 >/dev/null 2>&1; then
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/bench.json"
fi

# options are checked
if "$MIGSCHED" bench --sizes 0 >/dev/null 2>&1; then exit 1; fi
if "$MIGSCHED" bench --bogus >/dev/null 2>&1; then exit 1; fi
"$MIGSCHED" bench --help | grep -q -- '--sim-jobs'
echo "test_bench: ok"
