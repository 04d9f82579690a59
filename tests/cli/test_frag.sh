#!/usr/bin/env bash
# migsched frag and models: the worked FragCost values through the CLI,
# the JSON shape, and errors on bad input.
set -eu
M=${MIGSCHED:-build/migsched}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fc() { "$M" frag --json "$@" | sed -n 's/.*"fragcost":\([0-9.]*\).*/\1/p'; }
[ "$(fc --used '')" = "0.000000" ] || fail "empty GPU"
[ "$(fc --model A100-40GB --used 1g.5gb@1,1g.5gb@5)" = "0.625000" ] || fail "1g@1,1g@5"
[ "$(fc --used 1g@4,1g@5)" = "0.000000" ] || fail "1g@4,1g@5"
[ "$(fc --used 2g.10gb@2)" = "0.250000" ] || fail "2g@2"
[ "$(fc --used 3g@0)" = "0.437500" ] || fail "3g@0"
[ "$(fc --used 3g@0 --all-profiles)" = "0.350000" ] || fail "all-profiles"
[ "$(fc --used 3g@0 --weights 4g=1)" = "1.000000" ] || fail "weights"

out=$("$M" frag --used 1g@1,1g@5)
echo "$out" | grep -q 'FragCost 0.6250' || fail "drawing lacks FragCost"
echo "$out" | grep -q '|1g |' || fail "drawing lacks the slice map"

# bad input: non-zero exit and a message naming the problem
if "$M" frag --used 3g@2 2>"$tmp/err"; then fail "illegal start accepted"; fi
grep -q "3g@2" "$tmp/err" || fail "error does not name the instance"
if "$M" frag --used 4g@0,3g@0 2>/dev/null; then fail "overlap accepted"; fi
if "$M" frag --model V100 --used '' 2>/dev/null; then fail "unknown model accepted"; fi

"$M" models | grep -q 'A100-40GB .* 153' || fail "models table"
"$M" models --model A100-40GB | grep -q '298 placement sets, 144 occupancy masks, 19 maximal layouts' \
    || fail "A100 enumeration"
"$M" models --model A30 | grep -q '5 maximal layouts' || fail "A30 enumeration"
echo ok
