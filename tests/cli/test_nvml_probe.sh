#!/usr/bin/env bash
# migsched nvml-probe against the fake libnvidia-ml.so.1 (tests/nvml/fake_nvml.c):
# tables match on A100/H100/A30, one deliberately different H200 placement is
# flagged, MIG-disabled and lost GPUs are handled, and the probe changes nothing.
set -eu
M=${MIGSCHED:-build/migsched}
LIB=$(dirname "$M")/fake-nvml/libnvidia-ml.so.1
fail() { echo "FAIL: $*"; exit 1; }
[ -f "$LIB" ] || fail "no fake NVML at $LIB (make tests builds it)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export MS_FAKE_NVML_STATE=$tmp/state
unset MS_FAKE_NVML_FAULTS

# 1. driver and tables agree: exit 0, every row ok
printf 'gpu a100-40\ngi 1 9 4\nci 0 2 0 MIG-test-1\ngpu h100-80\ngpu a30 mig=0\n' > "$tmp/state"
cp "$tmp/state" "$tmp/before"
"$M" nvml-probe --lib "$LIB" > "$tmp/out" || fail "matching tables: exit $?"
grep -q '^GPU 0: NVIDIA A100-SXM4-40GB' "$tmp/out" || fail "GPU 0 line"
grep -q 'model H100-80GB, MIG enabled' "$tmp/out" || fail "H100 model line"
grep -q 'model A30, MIG disabled' "$tmp/out" || fail "A30 MIG disabled"
grep -q 'profile info needs MIG enabled' "$tmp/out" || fail "MIG-disabled note"
grep -Eq '^  3g.20gb +0x2 +9 +3 +2  0:4 4:4 +0:4 4:4 +ok' "$tmp/out" || fail "3g row"
grep -q '^0 differences, 0 GPUs unreadable' "$tmp/out" || fail "summary"
if grep -q DIFFERS "$tmp/out"; then fail "difference reported on matching tables"; fi
cmp -s "$tmp/state" "$tmp/before" || fail "the probe changed the driver state"

# 1b. a driver with only the v1 profile call (no names): still a full comparison
R470=$(dirname "$M")/fake-nvml-r470/libnvidia-ml.so.1
"$M" nvml-probe --lib "$R470" > "$tmp/out" || fail "r470 fake: exit $?"
grep -Eq '^  4g.20gb +0x3 +5 +4 +1  0:4 +0:4 +ok' "$tmp/out" || fail "r470 4g row"
cmp -s "$tmp/state" "$tmp/before" || fail "the probe changed the driver state (r470)"

# 2. one deliberately different placement (3g only at 4 on the H200): flagged, exit 1
printf 'gpu h200 placements=9:10\n' > "$tmp/state"
set +e
"$M" nvml-probe --lib "$LIB" > "$tmp/out"; rc=$?
set -e
[ "$rc" -eq 1 ] || fail "difference: exit $rc, want 1"
grep -Eq '^  3g.71gb .* 4:4 +0:4 4:4 +DIFFERS: placements' "$tmp/out" || fail "3g.71gb not flagged"
[ "$(grep -c DIFFERS "$tmp/out")" -eq 1 ] || fail "exactly one row should differ"
grep -q '^1 difference, 0 GPUs unreadable' "$tmp/out" || fail "summary with one difference"

# 3. JSON: the same facts
"$M" nvml-probe --lib "$LIB" --json > "$tmp/json" && fail "json: exit 0 despite a difference"
grep -q '^{"gpus":\[{"index":0,"name":"NVIDIA H200"' "$tmp/json" || fail "json head"
grep -q '"name":"3g.71gb","index":2,"table":{"id":9,"slices":3,"max":2,"placements":\[\[0,4\],\[4,4\]\]},"driver":{"id":9,"name":"3g.71gb","slices":3,"max":2,"memory_mb":[0-9]*,"placements":\[\[4,4\]\]},"differs":"placements"}' "$tmp/json" \
    || fail "json 3g row"
grep -q '"differences":1,"errors":0}$' "$tmp/json" || fail "json tail"

# 4. a lost GPU: reported, the others still probed, exit 3
printf 'gpu a100-40 lost=1\ngpu a30\n' > "$tmp/state"
set +e
"$M" nvml-probe --lib "$LIB" > "$tmp/out" 2>&1; rc=$?
set -e
[ "$rc" -eq 3 ] || fail "lost GPU: exit $rc, want 3"
grep -q 'GPU 0: cannot read: .*fallen off the bus.*NVML_ERROR_GPU_IS_LOST' "$tmp/out" || fail "lost message"
grep -q '^GPU 1: NVIDIA A30' "$tmp/out" || fail "GPU 1 not probed after a lost GPU"

# 5. errors: no library, no driver, bad usage
if "$M" nvml-probe --lib "$tmp/none.so" 2> "$tmp/err"; then fail "missing library accepted"; fi
grep -q "cannot load $tmp/none.so" "$tmp/err" || fail "missing library message"
rm -f "$tmp/state"
set +e
"$M" nvml-probe --lib "$LIB" 2> "$tmp/err"; rc=$?
set -e
[ "$rc" -eq 3 ] || fail "driver not loaded: exit $rc"
grep -q 'driver is not loaded' "$tmp/err" || fail "driver not loaded message"
set +e
"$M" nvml-probe --bogus 2>/dev/null; rc=$?
set -e
[ "$rc" -eq 2 ] || fail "bad option: exit $rc"
"$M" --help | grep -q 'nvml-probe' || fail "not listed in --help"
echo ok
