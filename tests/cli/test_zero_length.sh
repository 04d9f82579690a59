#!/usr/bin/env bash
# No zero-length segments, ever, and simulate and check agree: random
# high-load traces with migration on, every policy (issue 11 item 2: fa's
# make_room used to move a job it had placed in the same instant).
set -eu
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 202 at 800 jobs is the issue's reproducer; the others are more of the same
for seed in 202 203 204 205 206 207 208 209; do
    load=$(awk -v s="$seed" 'BEGIN { printf "%.2f", 1.0 + (s % 4) * 0.1 }')
    [ "$seed" = 202 ] && load=1.2
    "$M" gen-trace --jobs 800 --load "$load" --gpus 8 --mix 1g=30,2g=25,3g=20,4g=15,7g=10 \
        --dist lognormal --mean 600 --sigma 1 --seed "$seed" -o "$tmp/t.csv"
    for p in fa static first-fit best-fit mfi fgd node-profile timeslice; do
        for gpn in 8 4; do
            "$M" simulate --trace "$tmp/t.csv" --gpus 8 --gpus-per-node "$gpn" --policy "$p" \
                --schedule-out "$tmp/s.csv" --quiet || fail "simulate $p seed $seed"
            awk -F, 'NR > 1 && $5 + 0 >= $6 + 0 { print "zero-length segment: " $0; bad = 1 }
                     END { exit bad }' "$tmp/s.csv" || fail "$p seed $seed gpn $gpn"
            ts=; [ "$p" = timeslice ] && ts=--timeslice
            "$M" check --trace "$tmp/t.csv" --schedule "$tmp/s.csv" --gpus 8 $ts > "$tmp/c.txt" 2>&1 \
                || fail "$p seed $seed gpn $gpn: check rejects the simulator's schedule: $(tail -n 3 "$tmp/c.txt")"
        done
    done
done
echo ok
