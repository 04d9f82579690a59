#!/usr/bin/env bash
# End to end: gen-trace -> simulate for every policy; outputs exist and carry
# the required columns and keys; bad input gives a non-zero exit naming the line.
set -eu
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

"$M" gen-trace --jobs 300 --load 0.9 --gpus 8 --mix 1g=3,2g=2,3g=1,4g=1,7g=1 \
    --dist lognormal --mean 300 --seed 5 -o "$tmp/t.csv"
head -n1 "$tmp/t.csv" | grep -qx 'job_id,arrival_s,profile,duration_s' || fail "trace header"
[ "$(wc -l < "$tmp/t.csv")" -eq 301 ] || fail "trace rows"

# same seed, same trace
"$M" gen-trace --jobs 300 --load 0.9 --gpus 8 --mix 1g=3,2g=2,3g=1,4g=1,7g=1 \
    --dist lognormal --mean 300 --seed 5 -o "$tmp/t2.csv"
cmp -s "$tmp/t.csv" "$tmp/t2.csv" || fail "gen-trace is not deterministic"

keys="makespan_s mean_wait_s p50_wait_s p95_wait_s p99_wait_s mean_exec_s mean_jct_s
      jobs_completed jobs_rejected migrations reconfigurations mean_fragcost
      mean_utilization lower_bound_s"
for p in fa static first-fit best-fit mfi fgd node-profile timeslice; do
    "$M" simulate --trace "$tmp/t.csv" --gpus 8 --gpus-per-node 4 --policy "$p" \
        --schedule-out "$tmp/s-$p.csv" --metrics-out "$tmp/m-$p.json" > "$tmp/out-$p.txt" \
        || fail "simulate --policy $p"
    grep -q '^makespan' "$tmp/out-$p.txt" || fail "$p: no summary"
    head -n1 "$tmp/s-$p.csv" | grep -q '^job_id,gpu,start,profile,begin_s,end_s' \
        || fail "$p: schedule header"
    [ "$(wc -l < "$tmp/s-$p.csv")" -gt 300 ] || fail "$p: schedule rows"
    for k in $keys; do
        grep -q "\"$k\":" "$tmp/m-$p.json" || fail "$p: metrics lack $k"
    done
    # the same schedule with the scan index
    "$M" simulate --trace "$tmp/t.csv" --gpus 8 --gpus-per-node 4 --policy "$p" --index scan \
        --schedule-out "$tmp/s2-$p.csv" --quiet || fail "simulate --index scan --policy $p"
    cmp -s "$tmp/s-$p.csv" "$tmp/s2-$p.csv" || fail "$p: scan and bucket schedules differ"
done

# malformed trace: exit 1, message names file, line and field
printf 'job_id,arrival_s,profile,duration_s\na,0,1g,10\nb,1,1g,-5\n' > "$tmp/bad.csv"
set +e
"$M" simulate --trace "$tmp/bad.csv" --gpus 2 --policy first-fit > /dev/null 2> "$tmp/err.txt"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "malformed trace: exit $rc, wanted 1"
grep -q 'bad.csv:3:' "$tmp/err.txt" || fail "message does not name line 3: $(cat "$tmp/err.txt")"
grep -q "duration_s" "$tmp/err.txt" || fail "message does not name the field"

printf 'job_id,arrival_s,profile,duration_s\na,0,9g,10\n' > "$tmp/bad2.csv"
set +e
"$M" simulate --trace "$tmp/bad2.csv" --gpus 2 --policy first-fit > /dev/null 2> "$tmp/err.txt"
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "unknown profile: exit $rc"
grep -q 'bad2.csv:2:.*profile' "$tmp/err.txt" || fail "unknown profile message: $(cat "$tmp/err.txt")"

# fa+ is the default policy
"$M" simulate --trace "$tmp/t.csv" --gpus 8 --metrics-out "$tmp/dflt.json" --quiet || fail "default policy"
grep -q '"policy": "fa+"' "$tmp/dflt.json" || fail "the default policy is not fa+"

# usage errors: exit 2
set +e
"$M" simulate --trace "$tmp/t.csv" > /dev/null 2>&1; rc1=$?
"$M" simulate --trace "$tmp/t.csv" --gpus 2 --policy nope > /dev/null 2>&1; rc2=$?
"$M" simulate --trace "$tmp/t.csv" --gpus x --policy fa > /dev/null 2>&1; rc3=$?
"$M" gen-trace --jobs 10 -o "$tmp/x.csv" > /dev/null 2>&1; rc4=$?
"$M" simulate --trace "$tmp/missing.csv" --gpus 2 --policy fa > /dev/null 2>&1; rc5=$?
set -e
[ "$rc1" -eq 2 ] && [ "$rc2" -eq 2 ] && [ "$rc3" -eq 2 ] && [ "$rc4" -eq 2 ] \
    || fail "usage exits: $rc1 $rc2 $rc3 $rc4"
[ "$rc5" -eq 1 ] || fail "missing trace: exit $rc5"
echo "ok"
