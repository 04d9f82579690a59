#!/usr/bin/env bash
# bench-sched.sh - the scheduler's and the simulator's speed in one run
# (issue 25; docs/performance.md, "Decisions at the limit"):
#   1. `migsched bench --no-place --no-migration`: the cost of one event
#      with 0, 10,000 and 100,000 jobs waiting at 1,000 and 10,000 GPUs (fa+,
#      the default policy, and best-fit), then 1,000,000 jobs on 10,000
#      A100-40GB at loads 0.9 and 1.2 (same policies; ms_sim_run's time and
#      the case's peak RSS) and the scaling pair;
#   2. the same 1,000,000-job runs through the whole `simulate` command on
#      gen-trace files (Poisson arrivals, the five classic profiles,
#      lognormal durations, seed 1; CSV reading included): wall time and
#      peak RSS from /usr/bin/time;
#   3. with CALLGRIND=1 (and valgrind installed): instructions per event of
#      the queue cases, counted by callgrind over the measured loop alone.
#      This machine's wall times move by tens of percent with its load; the
#      instruction counts do not.
#
# Usage: scripts/bench-sched.sh [OUT_DIR]      (default bench-sched/)
#   MIGSCHED=path     use that binary (default: build it, build-bench/migsched)
#   KEEP=1            keep the generated traces (32 MB each)
# Benchmarks report figures; nothing here fails on a time.
set -eu
cd "$(dirname "$0")/.."
out=${1:-bench-sched}
if [ -z "${MIGSCHED:-}" ]; then
    make -s -j2 BUILD=build-bench OPT="-O2 -g -DNDEBUG" build-bench/migsched
    MIGSCHED=build-bench/migsched
fi
M=$MIGSCHED
mkdir -p "$out"
echo "== $(date -u +%FT%TZ) $(uname -m), $(nproc) CPUs, load: $(cut -d' ' -f1-3 /proc/loadavg)" |
    tee "$out/summary.txt"

echo "== 1. migsched bench --no-place --no-migration" | tee -a "$out/summary.txt"
"$M" bench --no-place --no-migration --json "$out/bench.json" | tee "$out/bench.txt"

echo "== 2. simulate, 1,000,000 jobs on 10,000 A100-40GB in nodes of 8" | tee -a "$out/summary.txt"
printf '%-9s %5s %9s %9s %9s %11s\n' policy load wall_s user_s peak_MB mean_wait_s | tee -a "$out/summary.txt"
for load in 0.9 1.2; do
    t="$out/t$load.csv"
    "$M" gen-trace --jobs 1000000 --load "$load" --gpus 10000 --dist lognormal --seed 1 -o "$t"
    for pol in fa+ best-fit; do
        m="$out/m-$pol-$load.json"
        /usr/bin/time -f '%e %U %M' -o "$out/time.txt" \
            "$M" simulate --trace "$t" --gpus 10000 --gpus-per-node 8 --policy "$pol" \
            --metrics-out "$m" --quiet
        read -r wall user kb < "$out/time.txt"
        wait_s=$(sed -n 's/.*"mean_wait_s": *\([0-9.]*\).*/\1/p' "$m")
        printf '%-9s %5s %9s %9s %9d %11s\n' "$pol" "$load" "$wall" "$user" $((kb / 1024)) "$wait_s" |
            tee -a "$out/summary.txt"
    done
    [ "${KEEP:-0}" = 1 ] || rm -f "$t"
done
rm -f "$out/time.txt"

if [ "${CALLGRIND:-0}" = 1 ]; then
    if ! command -v valgrind >/dev/null 2>&1; then
        echo "== 3. skipped: no valgrind" | tee -a "$out/summary.txt"
        exit 0
    fi
    echo "== 3. instructions per event (callgrind over the measured events)" | tee -a "$out/summary.txt"
    printf '%-9s %6s %7s %8s %12s\n' policy GPUs depth events instr/event | tee -a "$out/summary.txt"
    for pol in fa+ best-fit; do
        for gpus in 1000 10000; do
            for depth in 0 10000 100000; do
                log="$out/cg-$pol-$gpus-$depth.txt"
                valgrind --tool=callgrind --toggle-collect=qb_measure \
                    --callgrind-out-file="$out/cg.out" "$M" bench --no-place --no-migration \
                    --no-sim --queue-policies "$pol" --queue-sizes "$gpus" --queue-depths "$depth" \
                    --iters 20000 > "$log" 2>&1
                ir=$(sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' "$log" | tr -d ,)
                ev=$(awk -v p="$pol" '$1 == p && NF > 10 { print $4 }' "$log")
                printf '%-9s %6s %7s %8s %12s\n' "$pol" "$gpus" "$depth" "$ev" $((ir / ev)) |
                    tee -a "$out/summary.txt"
                rm -f "$out/cg.out"
            done
        done
    done
fi
echo "== summary in $out/summary.txt, every figure as JSON in $out/bench.json"
