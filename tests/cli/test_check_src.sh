#!/usr/bin/env bash
# The source rules are checked by a tool, not a reviewer (scripts/
# check-src.sh): the tree passes, and a copy of it with one offender
# planted per rule fails, naming each (so no rule is a check that cannot
# fail): a banned call, a file of 801 lines, a function of 151 lines (150
# pass), another folder's private header, src/agent including src/service,
# the library printing, a library folder including a layer above it, a
# cycle among the public headers, and an allow-list entry that no longer
# matches an offender.
set -u
cd "$(dirname "$0")/../.."
fail() { echo "FAIL: $*"; exit 1; }
bash scripts/check-src.sh || fail "the tree breaks a rule"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/scripts"
cp -r src include "$tmp/"
cp scripts/check-src.sh scripts/check-src.allow "$tmp/scripts/"
# a function of n lines (signature to closing brace)
fn() {   # NAME LINES
    printf 'static int %s(void)\n{\n' "$1"
    for _ in $(seq 1 $(($2 - 3))); do printf '    (void)0;\n'; done
    printf '}\n'
}
{ fn ok_150 150; fn too_long 151; } > "$tmp/src/core/planted_fn.c"
seq 1 801 | sed 's|.*|/* line */|' > "$tmp/src/io/planted_big.c"
printf '#include "policy/policy_int.h"\nint planted_x(void) { return sprintf(0, ""); }\n' \
    > "$tmp/src/sched/planted_int.c"
printf '#include "service/svc.h"\n' > "$tmp/src/agent/planted_agent.c"
printf '#include <stdio.h>\nvoid planted_print(void) { printf("hi"); }\n' > "$tmp/src/policy/planted_print.c"
printf '#include "migsched/sim.h"\n' > "$tmp/src/io/planted_layer.c"
printf '#include "migsched/sim.h"\n' >> "$tmp/include/migsched/segment.h"
echo "src/core/rng.c" >> "$tmp/scripts/check-src.allow"
out=$(bash "$tmp/scripts/check-src.sh" 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || fail "the planted offenders passed"
for want in "planted_int.c:2:.*sprintf" "src/io/planted_big.c: 801 lines" \
            "planted_fn.c:.*too_long is 151 lines" "planted_int.c:1: includes policy/policy_int.h" \
            "planted_agent.c:1:" "planted_print.c:2:.*printf" "planted_layer.c:1:.*migsched/sim.h" \
            "has a cycle" "'src/core/rng.c' breaks no rule any more"; do
    echo "$out" | grep -q -- "$want" || fail "not reported: $want"
done
echo "$out" | grep -q "ok_150" && fail "a function of 150 lines was reported"
echo "test_check_src: ok"
