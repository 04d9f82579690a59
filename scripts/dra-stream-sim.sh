#!/usr/bin/env bash
# dra-stream-sim.sh - the DRA comparison's stream (tests/k8s/compare_dra.py:
# a pod every 0.4 s, 75% A100-40GB, 1g 40% / 2g 20% / 3g 15% / 4g 15% /
# 7g 10%, each held a seeded 5-15 s) replayed in the simulator on the same
# cluster (three nodes of 2 A100-40GB, one of 2 H100-80GB; no migration,
# no interference, instances made at once, run times unknown to the
# scheduler), over many seeds: what the queue discipline, the policy and
# priorities by size can buy for 4g and 7g pods against first fit, without
# the control plane's noise (docs/dra.md, "Why 7g and 4g wait").
#
# Usage: scripts/dra-stream-sim.sh [SEEDS [PODS]]   (default 40 seeds of 80 pods)
#   MIGSCHED=path   the binary (default build/migsched)
#   INTERVAL=S      a pod every S seconds instead of 0.4 (a lighter stream:
#                   the same pods and holds, arrivals spread out)
# Prints one Markdown row per variant: the mean wait by size over every
# pod of every seed. A benchmark of decisions: nothing here fails on them.
set -eu
cd "$(dirname "$0")/.."
SEEDS=${1:-40}
PODS=${2:-80}
M=${MIGSCHED:-build/migsched}
IV=${INTERVAL:-0.4}
[ -x "$M" ] || { echo "no $M (make all)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/migsched-dra-sim.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# the streams, as compare_dra.py draws them; PRIO=1: 7g priority 2, 4g 1
python3 - "$tmp" "$SEEDS" "$PODS" "$IV" <<'PY'
import os, sys
sys.path.insert(0, "tests/k8s")
import compare_dra
d, seeds, pods, iv = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
for s in range(1, seeds + 1):
    for prio in (0, 1):
        with open(os.path.join(d, "s%d.p%d.csv" % (s, prio)), "w") as f:
            f.write("job_id,arrival_s,profile,duration_s,model,priority\n")
            for name, prof, at, dur in compare_dra.stream(pods, s):
                size = prof.split(".")[0]
                model = compare_dra.PROF[prof][0]
                p = {"7g": 2, "4g": 1}.get(size, 0) if prio else 0
                f.write("%s,%.3f,%s,%.3f,%s,%d\n" % (name, at / 0.4 * iv, size, dur, model, p))
PY

variant() { # LABEL PRIO simulate-options...
    label=$1 prio=$2
    shift 2
    for s in $(seq 1 "$SEEDS"); do
        "$M" simulate --trace "$tmp/s$s.p$prio.csv" --node a0=2xA100-40GB:mig --node a1=2xA100-40GB:mig \
            --node a2=2xA100-40GB:mig --node h0=2xH100-80GB:mig --no-migration --beta 0 --create-s 0 \
            --no-estimates --quiet --schedule-out "$tmp/out.$s.csv" "$@"
    done
    python3 - "$tmp" "$SEEDS" "$label" <<'PY'
import csv, os, sys, collections
d, seeds, label = sys.argv[1], int(sys.argv[2]), sys.argv[3]
w = collections.defaultdict(list)
for s in range(1, seeds + 1):
    arr = {r["job_id"]: (float(r["arrival_s"]), r["profile"]) for r in csv.DictReader(open(os.path.join(d, "s%d.p0.csv" % s)))}
    first = {}
    for r in csv.DictReader(open(os.path.join(d, "out.%d.csv" % s))):
        first[r["job_id"]] = min(first.get(r["job_id"], 1e18), float(r["begin_s"]))
    for j, (a, p) in arr.items():
        w[p].append(first[j] - a)
        w["all"].append(first[j] - a)
print("| %s | %s |" % (label, " | ".join("%.2f" % (sum(w[k]) / len(w[k])) for k in ("1g", "2g", "3g", "4g", "7g", "all"))))
PY
}

echo "| $SEEDS seeds x $PODS pods: mean wait, s | 1g | 2g | 3g | 4g | 7g | all |"
echo "|---|---:|---:|---:|---:|---:|---:|"
variant "first fit, anyone passes (kube-scheduler's allocator)" 0 --policy first-fit --queue backfill --backfill-bound inf
variant "fa+, easy (the default; its 3600 s bound never reached)" 0 --policy fa+
variant "best-fit, easy" 0 --policy best-fit
variant "fa+, easy, --backfill-bound 0" 0 --policy fa+ --backfill-bound 0
variant "first fit, priorities 7g 2 / 4g 1" 1 --policy first-fit --queue backfill --backfill-bound inf
variant "fa+, easy, priorities 7g 2 / 4g 1" 1 --policy fa+
variant "fa+, easy, --backfill-bound 0, priorities 7g 2 / 4g 1" 1 --policy fa+ --backfill-bound 0
variant "fa+, fifo" 0 --policy fa+ --queue fifo
