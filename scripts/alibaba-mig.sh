#!/usr/bin/env bash
# alibaba-mig.sh - regenerate every table of docs/alibaba-mig.md §3 (replays)
# and §4 (MIG fill) from the commands of its §2, and check every replay's
# schedule with `migsched check`.
#
#   scripts/alibaba-mig.sh [OUT]     (default OUT: /tmp/alibaba-mig)
#
# Environment: MIGSCHED (default build/migsched), TRACES (default
# ../shared/traces/alibaba-openb, relative to the repository root).
# Writes OUT/tables.md (the markdown tables, as pasted into the doc) and keeps
# the imported traces, metrics, schedules, fill JSON and report CSVs under OUT.
# bash, awk and sed only. Exit 1 if a schedule fails `migsched check`.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
MS=${MIGSCHED:-$ROOT/build/migsched}
T=${TRACES:-$ROOT/../shared/traces/alibaba-openb}
OUT=${1:-/tmp/alibaba-mig}
case $MS in /*) ;; *) MS=$ROOT/$MS ;; esac
case $T in /*) ;; *) T=$ROOT/$T ;; esac
[ -x "$MS" ] || { echo "alibaba-mig.sh: no $MS (run make)" >&2; exit 2; }
[ -r "$T/openb_pod_list_default.csv" ] || { echo "alibaba-mig.sh: no trace in $T" >&2; exit 2; }
mkdir -p "$OUT"
MD=$OUT/tables.md
: >"$MD"
start=$SECONDS
POLICIES="fa static first-fit best-fit mfi fgd node-profile timeslice"
NODES=$T/openb_node_list_gpu_node.csv

# ---------------------------------------------------------------- §3 replays
# import TRACE MAPPING -> $OUT/TRACE-MAPPING.csv
import() {
    "$MS" import-alibaba --pods "$T/openb_pod_list_$1.csv" --nodes "$NODES" \
        --mapping "$2" --out "$OUT/$1-$2.csv" --cluster-out "$OUT/cluster.json" \
        2>"$OUT/$1-$2.import.txt"
}

# metrics JSON -> one table row (keys read one per line after splitting on , { })
row() {
    tr ',{}' '\n\n\n' <"$1" | awk -F: '
        NF >= 2 { k = $1; v = $2; gsub(/[ "\t]/, "", k); gsub(/[ "\t]/, "", v); m[k] = v }
        END {
            printf "| %s | %.0f | %.0f | %.0f | %.1f | %.2f | %.4f | %d | %d |\n",
                m["policy"], m["mean_wait_s"], m["p95_wait_s"], m["mean_jct_s"],
                m["makespan_s"] / 86400, 100 * m["mean_utilization"],
                m["mean_fragcost"], m["migrations"], m["reconfigurations"]
        }'
}

checked=0
failed_checks=0
# replay TRACE MAPPING GPUS: one table, every policy, every schedule checked
replay() {
    local tr=$1 map=$2 n=$3 p tag extra nodes
    nodes=$(awk -v n="$n" 'BEGIN { q = n / 8; if (q == int(q)) printf "%d", q; else printf "%.1f", q }')
    {
        printf '**%s-%s, %s GPUs** (%s nodes of 8)\n\n' "$tr" "$map" "$n" "$nodes"
        echo '| policy | mean wait s | p95 wait s | mean JCT s | makespan d | utilisation % | mean FragCost | migrations | reconfigurations |'
        echo '|---|---|---|---|---|---|---|---|---|'
    } >>"$MD"
    for p in $POLICIES; do
        tag=$OUT/replay-$tr-$map-$n-$p
        "$MS" simulate --trace "$OUT/$tr-$map.csv" --policy "$p" --model A100-40GB \
            --gpus "$n" --gpus-per-node 8 --metrics-out "$tag.json" \
            --schedule-out "$tag.schedule.csv" --quiet
        row "$tag.json" >>"$MD"
        extra=
        [ "$p" = timeslice ] && extra=--timeslice
        checked=$((checked + 1))
        if ! "$MS" check --trace "$OUT/$tr-$map.csv" --schedule "$tag.schedule.csv" \
                --gpus "$n" --model A100-40GB $extra >"$tag.check.txt" 2>&1; then
            failed_checks=$((failed_checks + 1))
            echo "alibaba-mig.sh: check failed: $tag ($(tail -n 1 "$tag.check.txt"))" >&2
        fi
    done
    echo >>"$MD"
}

echo '## §3 replays' >>"$MD"
echo >>"$MD"
import default compute
import default memory
import gpushare100 compute
import gpushare100 memory
replay default compute 6212
replay default compute 64
replay default compute 32
replay default memory 32
replay gpushare100 compute 16
replay gpushare100 memory 16
{
    echo "migsched check: $((checked - failed_checks)) of $checked replay schedules valid"
    echo
} >>"$MD"

# ------------------------------------------------------------------ §4 fill
# fill TRACE MAPPING: the fill JSON, `migsched report --fill` CSVs, one table
fill() {
    local tr=$1 map=$2 json=$OUT/fill-$1-$2.json rep=$OUT/report-fill-$1-$2
    "$MS" import-alibaba --fill --pods "$T/openb_pod_list_$tr.csv" --nodes "$NODES" \
        --mapping "$map" --policy all --seeds 42-51 --json "$json" >"$OUT/fill-$tr-$map.txt" 2>&1
    rm -rf "$rep"
    "$MS" report --fill "$json" --out "$rep" >/dev/null
    # mean over seeds of each policy's mapped demand (runs[].mapped_pct)
    sed 's/{"policy":"/\n@/g' "$json" | awk '
        /^@/ { p = substr($0, 2); sub(/".*/, "", p); s = $0; n = 0; t = 0
               while (match(s, /"mapped_pct":[0-9.]+/)) {
                   t += substr(s, RSTART + 13, RLENGTH - 13); n++
                   s = substr(s, RSTART + RLENGTH) }
               if (n) printf "%s,%.1f\n", p, t / n }' >"$rep/mapped.csv"
    {
        printf '**fill-%s-%s.json** (unallocated compute slices %%, mean of 10 seeds, by arrived %%)\n\n' "$tr" "$map"
        echo '| policy | 50% | 80% | 90% | 100% | 110% | 130% | unalloc memory % @100 | failed pods % @100 | FragCost @100 | mapped demand % at end |'
        echo '|---|---|---|---|---|---|---|---|---|---|---|'
        awk -F, '
            FILENAME ~ /fill_curves/ && FNR > 1 { c[$3 "," $4] = $5; next }
            FILENAME ~ /mapped/ { md[$1] = $2; next }
            FILENAME ~ /fill_table/ && FNR > 1 {
                p = $6; line = "| " p
                split("50 80 90 100 110 130", xs, " ")
                for (i = 1; i <= 6; i++) {
                    k = p "," xs[i]
                    line = line sprintf(" | %s", (k in c) ? sprintf("%.2f", c[k]) : "-")
                }
                printf "%s | %.2f | %.2f ± %.2f | %.4f | %s |\n", line, $9, $15, $16, $13,
                    (p in md) ? md[p] : "-"
            }' "$rep/fill_curves.csv" "$rep/mapped.csv" "$rep/fill_table.csv"
        echo
    } >>"$MD"
}

echo '## §4 fill (seeds 42-51)' >>"$MD"
echo >>"$MD"
fill default compute
fill default memory
fill gpushare20 compute
fill gpushare60 compute
fill gpushare100 compute
fill gpushare100 memory

echo "commit $(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- src include 2>/dev/null || echo ' (src/include modified)'), $((SECONDS - start)) s" >>"$MD"
cat "$MD"
[ "$failed_checks" -eq 0 ]
