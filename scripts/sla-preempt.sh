#!/usr/bin/env bash
# sla-preempt.sh - issue 24's SLA workload (docs/tenants.md, "The SLA
# workload"): an SLA stream (priority 10, 1g/2g, exponential 300 s, load
# 0.25) beside two batch tenants (priority 0, 3g/4g/7g, lognormal mean
# 1800 s, BATCHLOAD together) on 8 A100-40GB, fa+ and EASY, simulated
# without preemption and with each preemption setting; the same traces
# as the recipe in docs/tenants.md, without the tenant column.
#
# Usage: scripts/sla-preempt.sh [BATCHLOAD [SEEDS]]   (default 1.0, "1 2 3")
#   MIGSCHED=path   the binary (default build/migsched)
#   SETTINGS="..."  the preemption settings, ';'-separated (default below)
#   CKPT=S          the batch jobs save their progress every S s of their
#                   runs (the trace's checkpoint_s; default 0: they start over)
#   TENANTS=1       with the tenant column (b1, b2 alternating, sla), as the
#                   docs' "with tenants" rows
#   OPTS="..."      more simulate options for every run, the one without
#                   preemption included (e.g. --tenant sla:guarantee=14)
# Prints one Markdown row per seed and setting: SLA p99 and mean wait,
# preemptions, lost work, batch mean JCT, makespan, the changes against
# no preemption that the issue's targets name, and whether all three are
# met (SLA p99 at least 80% lower, lost work <= 5%, batch JCT within 10%).
# A benchmark of decisions: it fails on none of them.
set -eu
cd "$(dirname "$0")/.."
BL=${1:-1.0}
SEEDS=${2:-1 2 3}
M=${MIGSCHED:-build/migsched}
SETTINGS=${SETTINGS:---preempt;--preempt --preempt-after 60;--preempt --preempt-after 30}
CKPT=${CKPT:-0}
TENANTS=${TENANTS:-0}
OPTS=${OPTS:-}
[ -x "$M" ] || { echo "no $M (make all)" >&2; exit 1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/migsched-sla.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

mk() { # mk SEED -> $tmp/wSEED.csv
    local s=$1 span n
    "$M" gen-trace --jobs 1000 --load "$BL" --gpus 8 --mix 3g=1,4g=1,7g=1 \
        --dist lognormal --mean 1800 --sigma 1 --seed "$s" -o "$tmp/b$s.csv" >/dev/null
    span=$(tail -n1 "$tmp/b$s.csv" | cut -d, -f2)
    n=$(awk -v t="$span" 'BEGIN{printf "%d", t*0.25*56/(300*1.33)}')
    "$M" gen-trace --jobs "$n" --load 0.25 --gpus 8 --mix 1g=2,2g=1 --dist exp \
        --mean 300 --seed $((s + 1000)) -o "$tmp/s$s.csv" >/dev/null
    { echo "job_id,arrival_s,profile,duration_s,priority,checkpoint_s,tenant"
      { awk -F, -v c="$CKPT" -v t="$TENANTS" 'NR>1{print $2","$3","$4",0,"c","(t == 1 ? (NR%2?"b1":"b2") : "")}' "$tmp/b$s.csv"
        awk -F, -v t="$TENANTS" 'NR>1{print $2","$3","$4",10,0,"(t == 1 ? "sla" : "")}' "$tmp/s$s.csv"; } |
        sort -t, -k1,1g | awk '{print NR-1","$0}'; } >"$tmp/w$s.csv"
}

row() { # row SEED NAME METRICS [BASE]
    python3 - "$@" <<'PY'
import json, sys
seed, name, path = sys.argv[1:4]
m = json.load(open(path))
base = json.load(open(sys.argv[4])) if len(sys.argv) > 4 else None
def g(o, k):
    return o.get(k, 0) or 0
cells = [g(m, "prio0_p99_wait_s"), g(m, "prio0_mean_wait_s"), g(m, "preemptions"),
         g(m, "lost_work_frac"), g(m, "prio1_mean_jct_s"), g(m, "makespan_s")]
met = ""
if base:
    def pct(a, b):
        return "%+.1f%%" % (100.0 * (a - b) / b) if b else "-"
    p99, jct = g(base, "prio0_p99_wait_s"), g(base, "prio1_mean_jct_s")
    vs = "%s / %s" % (pct(cells[0], p99), pct(cells[4], jct))
    # the issue's three targets: SLA p99 at least 80% lower, at most 5% of
    # the work lost, the batch JCT within 10%
    met = "yes" if cells[0] <= 0.2 * p99 and cells[3] <= 0.05 and cells[4] <= 1.1 * jct else "no"
else:
    vs = ""
print("| %s | %s | %.0f | %.0f | %d | %.3f | %.0f | %.0f | %s | %s |" % (
    seed, name, cells[0], cells[1], cells[2], cells[3], cells[4], cells[5], vs, met))
PY
}

echo "batch load $BL (total $(awk -v b="$BL" 'BEGIN{print b + 0.25}')), 8 A100-40GB, fa+, EASY," \
    "batch checkpoints every ${CKPT} s (0: none), tenants $([ "$TENANTS" = 1 ] && echo b1, b2, sla || echo none)"
echo
echo "| seed | options | SLA p99 wait (s) | SLA mean wait | preemptions | lost work | batch mean JCT (s) | makespan (s) | SLA p99 / batch JCT vs none | targets met |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---|---|"
for s in $SEEDS; do
    mk "$s"
    # shellcheck disable=SC2086
    "$M" simulate --trace "$tmp/w$s.csv" --gpus 8 --quiet $OPTS --metrics-out "$tmp/m$s.none.json" >/dev/null
    row "$s" "none" "$tmp/m$s.none.json"
    i=0
    IFS=';' read -ra sets <<<"$SETTINGS"
    for opt in "${sets[@]}"; do
        i=$((i + 1))
        # shellcheck disable=SC2086
        "$M" simulate --trace "$tmp/w$s.csv" --gpus 8 --quiet $OPTS $opt --metrics-out "$tmp/m$s.$i.json" >/dev/null
        row "$s" "\`$opt\`" "$tmp/m$s.$i.json" "$tmp/m$s.none.json"
    done
done
