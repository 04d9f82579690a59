#!/usr/bin/env bash
# experiment --scenario platform: seed 002's mixed platform runs every policy
# at three loads and writes its report; the figures are sane (a JCT is at
# least its wait; every job class ran).
set -eu
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$M" experiment --scenario platform --quick --out "$tmp/p" > "$tmp/out.txt" || fail "platform run"
grep -q '^medium load' "$tmp/out.txt" || fail "no table"
for f in README.md platform.csv jct_classes.svg wait.svg; do
    [ -s "$tmp/p/$f" ] || fail "missing $f"
done
[ "$(tail -n +2 "$tmp/p/platform.csv" | wc -l)" -eq 27 ] || fail "want 9 policies x 3 loads (fa+ first)"
awk -F, 'NR > 1 { if ($5 + 1e-6 < $3) { print "JCT below wait: " $0; bad = 1 }
                  if ($6 <= 0 || $7 <= 0 || $8 <= 0) { print "a class never ran: " $0; bad = 1 } }
         END { exit bad }' "$tmp/p/platform.csv" || fail "figures"
set +e
"$M" experiment --scenario nope > /dev/null 2>&1; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "unknown scenario: exit $rc"
echo ok
