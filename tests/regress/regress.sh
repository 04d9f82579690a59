#!/usr/bin/env bash
# Byte-identical regression of every policy's decisions.
#
#   tests/regress/regress.sh record   rewrite tests/regress/expected.txt
#   tests/regress/regress.sh check    compare against it (the CLI test does)
#
# Each case generates a trace with gen-trace (deterministic), simulates it
# with one policy and options, and records the sha256 of the schedule CSV and
# of the metrics JSON without its wall-clock line. The experiment's CSV and
# SVG outputs (--quick) are recorded as well. The fixture was first recorded
# on the tree before the scheduling loop moved into src/sched/ (issue 7), so
# a change in any line means that a decision changed.
set -eu
cd "$(dirname "$0")/../.."
M=${MIGSCHED:-build/migsched}
mode=${1:-check}
exp=tests/regress/expected.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# name | gen-trace options | simulate options (--trace/--schedule-out added)
cases() {
cat <<'C'
x4lo1|--jobs 400 --load 0.5 --gpus 4 --dist lognormal --mean 600 --sigma 1 --seed 20250|--gpus 4
x4me1|--jobs 400 --load 0.8 --gpus 4 --dist lognormal --mean 600 --sigma 1 --seed 20251|--gpus 4
x4hi1|--jobs 400 --load 1.1 --gpus 4 --dist lognormal --mean 600 --sigma 1 --seed 20252|--gpus 4
x4hi2|--jobs 400 --load 1.1 --gpus 4 --dist lognormal --mean 600 --sigma 1 --seed 28171|--gpus 4
n8mix|--jobs 300 --load 0.9 --gpus 8 --mix 1g=3,2g=2,3g=1,4g=1,7g=1 --dist lognormal --mean 300 --seed 5|--gpus 8 --gpus-per-node 4
n8hi|--jobs 500 --load 1.2 --gpus 8 --mix 1g=30,2g=25,3g=20,4g=15,7g=10 --dist lognormal --mean 600 --sigma 1 --seed 202|--gpus 8 --gpus-per-node 8
inf4|--jobs 300 --load 0.9 --gpus 4 --mix 1g=70,2g=20,7g=10 --dist exp --mean 400 --seed 11|--gpus 4
h100|--jobs 300 --load 0.9 --gpus 6 --model H100-80GB --dist exp --mean 500 --seed 7|--gpus 6 --gpus-per-node 3 --model H100-80GB
a30|--jobs 300 --load 0.9 --gpus 4 --model A30-24GB --dist uniform --min 10 --max 900 --seed 9|--gpus 4 --model A30-24GB
C
}
policies="fa fa+ static first-fit best-fit mfi fgd node-profile timeslice"
variants="|--no-balance|--no-dynamic|--no-migration|--queue fifo|--backfill-bound 0|--lb-threshold 0.1|--migrate-s 0 --create-s 0|--beta 0.2"

out="$tmp/got.txt"
: > "$out"
run_case() { # name trace policy extra...
    local name=$1 trace=$2 pol=$3; shift 3
    "$M" simulate --trace "$trace" --policy "$pol" "$@" --schedule-out "$tmp/s.csv" \
        --metrics-out "$tmp/m.json" --quiet
    local hs hm
    hs=$(sha256sum < "$tmp/s.csv" | cut -c1-16)
    hm=$(grep -v '"wall_s"' "$tmp/m.json" | sha256sum | cut -c1-16)
    echo "$name $pol [$*] $hs $hm" >> "$out"
}
while IFS='|' read -r name gen sim; do
    [ -n "$name" ] || continue
    # shellcheck disable=SC2086
    "$M" gen-trace $gen -o "$tmp/$name.csv"
    for p in $policies; do
        # shellcheck disable=SC2086
        run_case "$name" "$tmp/$name.csv" "$p" $sim
    done
    IFS='|' read -ra vs <<< "$variants"
    for v in "${vs[@]}"; do
        [ -n "$v" ] || continue
        for vp in fa fa+; do
            # shellcheck disable=SC2086
            run_case "$name" "$tmp/$name.csv" "$vp" $sim $v
        done
    done
done < <(cases)

# gangs of whole GPUs on 2 nodes, mixed with single jobs
{
    echo "job_id,arrival_s,profile,duration_s,gpus"
    i=0
    while [ $i -lt 120 ]; do
        g=1; p=1g
        case $((i % 7)) in 0) g=2; p=7g;; 1) p=3g;; 2) p=2g;; 3) g=4; p=7g;; 4) p=4g;; esac
        echo "j$i,$((i * 37)),$p,$((300 + (i * 131) % 900)),$g"
        i=$((i + 1))
    done
} > "$tmp/gang.csv"
for p in $policies; do
    run_case gang "$tmp/gang.csv" "$p" --gpus 8 --gpus-per-node 4
done

# the experiment's CSV and SVG outputs
"$M" experiment --quick --out "$tmp/xp" > /dev/null
for f in summary.csv sweep_beta.csv sweep_migration.csv sweep_t.csv makespan.svg wait.svg \
         exec.svg gantt_faplus_medium.svg fragcost_time.svg; do
    echo "experiment $f $(sha256sum < "$tmp/xp/$f" | cut -c1-16)" >> "$out"
done

if [ "$mode" = record ]; then
    cp "$out" "$exp"
    echo "recorded $(wc -l < "$exp") lines in $exp"
    exit 0
fi
if ! diff -u "$exp" "$out"; then
    echo "FAIL: decisions changed (lines above); rerun with 'record' only if the change is intended" >&2
    exit 1
fi
echo "ok: $(wc -l < "$out") cases byte-identical"
