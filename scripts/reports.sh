#!/usr/bin/env bash
# Regenerate the reports behind docs/results.md into one directory:
#   1. `migsched experiment` (the seed's ablation and the baselines, with the
#      runs it keeps under runs/),
#   2. the FGD fill grid (fgd-experiment, every policy) on the default and
#      gpushare traces,
#   3. the MIG fill (import-alibaba --fill, every MIG policy) on the default
#      trace, compute and memory mappings, and gpushare100,
#   4. `migsched report` over all of it.
# Usage: scripts/reports.sh [OUT]   (default report/)
# Environment: MIGSCHED (default build/migsched, built if missing),
#   TRACES (default ../shared/traces/alibaba-openb), SEEDS (default 42-51).
set -eu
cd "$(dirname "$0")/.."
OUT=${1:-report}
M=${MIGSCHED:-build/migsched}
T=${TRACES:-../shared/traces/alibaba-openb}
SEEDS=${SEEDS:-42-51}
NODES=$T/openb_node_list_gpu_node.csv

[ -x "$M" ] || make -j2 >/dev/null
mkdir -p "$OUT/data"
step() { printf '%-66s' "$1"; s=$(date +%s.%N); }
done_() { printf '%6.1f s\n' "$(echo "$(date +%s.%N) - $s" | bc)"; }
t0=$(date +%s.%N)

step "experiment -> $OUT/experiment"
"$M" experiment --out "$OUT/experiment" >"$OUT/data/experiment.txt"
done_

fgd=""
for t in default gpushare20 gpushare60 gpushare100; do
    step "fgd-experiment $t (seeds $SEEDS)"
    "$M" fgd-experiment --pods "$T/openb_pod_list_$t.csv" --nodes "$NODES" --policy all \
        --seeds "$SEEDS" --json "$OUT/data/fgd-$t.json" --csv "$OUT/data/fgd-$t.csv" \
        >"$OUT/data/fgd-$t.txt"
    fgd="$fgd${fgd:+,}$OUT/data/fgd-$t.json"
    done_
done

fill=""
for tm in default:compute default:memory gpushare100:compute; do
    t=${tm%%:*}; m=${tm##*:}
    step "import-alibaba --fill $t, $m mapping (seeds $SEEDS)"
    "$M" import-alibaba --fill --pods "$T/openb_pod_list_$t.csv" --nodes "$NODES" \
        --mapping "$m" --policy all --seeds "$SEEDS" --json "$OUT/data/fill-$t-$m.json" \
        >"$OUT/data/fill-$t-$m.txt" 2>>"$OUT/data/fill-counts.txt"
    fill="$fill${fill:+,}$OUT/data/fill-$t-$m.json"
    done_
done

runs=$(find "$OUT/experiment/runs" -mindepth 1 -maxdepth 1 -type d | sort | paste -sd, -)
step "report -> $OUT/README.md"
"$M" report --runs "$runs" --fgd "$fgd" --fill "$fill" --out "$OUT" >/dev/null
done_
printf '%-66s%6.1f s\n' "total" "$(echo "$(date +%s.%N) - $t0" | bc)"
