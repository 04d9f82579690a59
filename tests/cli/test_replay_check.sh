#!/usr/bin/env bash
# The Alibaba trace replayed on MIG under every policy, each schedule checked
# by `migsched check` (the same validity rules as the property tests).
# Skipped when ../shared/traces/alibaba-openb is not there.
set -eu
M=${MIGSCHED:-build/migsched}
T=../shared/traces/alibaba-openb
if [ ! -f "$T/openb_pod_list_gpushare100.csv" ]; then
    echo "skip: no trace at $T"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# gpushare100 under the memory mapping: the mix with the most small profiles;
# 32 GPUs so that jobs contend and policies differ.
"$M" import-alibaba --pods "$T/openb_pod_list_gpushare100.csv" --mapping memory \
    --out "$tmp/t.csv" 2>/dev/null
for p in fa static first-fit best-fit mfi fgd node-profile timeslice; do
    ts=""
    [ "$p" = timeslice ] && ts="--timeslice"
    "$M" simulate --trace "$tmp/t.csv" --gpus 32 --gpus-per-node 8 --policy "$p" \
        --schedule-out "$tmp/s.csv" --metrics-out "$tmp/m.json" --quiet
    if ! "$M" check --trace "$tmp/t.csv" --schedule "$tmp/s.csv" --gpus 32 $ts > "$tmp/check.txt"; then
        echo "FAIL: $p"; cat "$tmp/check.txt"; exit 1
    fi
    echo "$p: $(tail -n 1 "$tmp/check.txt")"
done
# the default trace under the compute mapping has gangs of 2, 4 and 8 GPUs
"$M" import-alibaba --pods "$T/openb_pod_list_default.csv" --out "$tmp/d.csv" 2>/dev/null
for p in fa first-fit node-profile; do
    "$M" simulate --trace "$tmp/d.csv" --gpus 64 --gpus-per-node 8 --policy "$p" \
        --schedule-out "$tmp/s.csv" --quiet
    "$M" check --trace "$tmp/d.csv" --schedule "$tmp/s.csv" --gpus 64 > "$tmp/check.txt" \
        || { echo "FAIL: default $p"; cat "$tmp/check.txt"; exit 1; }
    echo "default $p: $(tail -n 1 "$tmp/check.txt")"
done
# and the checker does catch a broken schedule: a 3g moved to start 2
awk -F, 'NR == 2 { $3 = 2; $4 = "3g.20gb" } { print }' OFS=, "$tmp/s.csv" > "$tmp/bad.csv"
if "$M" check --trace "$tmp/d.csv" --schedule "$tmp/bad.csv" --gpus 64 > "$tmp/check.txt"; then
    echo "FAIL: a 3g at start 2 passed the check"; exit 1
fi
grep -q "illegal start 2" "$tmp/check.txt" || { echo "FAIL: wrong finding"; cat "$tmp/check.txt"; exit 1; }
echo ok
