#!/usr/bin/env bash
# End to end: a small synthetic openb-style pod list and node list ->
# import-alibaba -> simulate with every policy; the schedule is checked: no
# two segments on one GPU overlap in time on overlapping memory slices, and
# every kept job ran. Then the fill mode, and errors that name line and field.
set -eu
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/nodes.csv" <<'EOF'
sn,cpu_milli,memory_mib,gpu,model
node-0,96000,393216,4,G2
node-1,96000,393216,4,G2
node-2,16000,122880,2,P100
node-3,64000,262144,0,
EOF

# 24 GPU pods (one gang of 4, one of 2), 2 CPU-only, 2 pending, 1 with
# deletion == creation, 1 still running (no deletion time).
{
    echo "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
    milli=(810 470 320 230 110 1000 650 160 550 50 810 470 1000 320 230 110 460 590 1000 810 440 140)
    t=0
    for i in "${!milli[@]}"; do
        t=$((t + 7 * (i % 5) + 3))
        echo "pod-$i,6000,12288,1,${milli[$i]},,LS,Succeeded,$t,$((t + 40 + 13 * (i % 7))),$t"
    done
    echo "gang-4,32000,65536,4,1000,,LS,Running,20,120,20"
    echo "gang-2,16000,32768,2,1000,V100M32|G2,LS,Running,50,95,51"
    echo "cpu-0,4000,8192,0,0,,BE,Running,5,50,5"
    echo "cpu-1,4000,8192,0,0,,BE,Running,6,60,6"
    echo "pend-0,6000,12288,1,470,,BE,Pending,30,90,"
    echo "pend-1,6000,12288,1,1000,,BE,Pending,31,91,"
    echo "zero,6000,12288,1,320,,LS,Failed,40,40,40"
    echo "open,6000,12288,1,230,,LS,Running,60,,60"
} >"$tmp/pods.csv"

"$M" import-alibaba --pods "$tmp/pods.csv" --nodes "$tmp/nodes.csv" --gpus-per-node 4 \
    --mapping compute --out "$tmp/trace.csv" --cluster-out "$tmp/cluster.json" 2>"$tmp/err.txt"
cat "$tmp/err.txt"
grep -q 'pods read 30: kept 25 (gangs 2, capped at trace end 1)' "$tmp/err.txt"
grep -q 'cpu-only 2, pending (never scheduled) 2, deletion <= creation 1' "$tmp/err.txt"
grep -q 'MIG cluster: 10 x A100-40GB, 4 GPUs per node' "$tmp/err.txt"
head -n 1 "$tmp/trace.csv" | grep -qx 'job_id,arrival_s,profile,duration_s,gpus'
[ "$(tail -n +2 "$tmp/trace.csv" | wc -l)" -eq 25 ]
grep -q '^pod-0,3,7g.40gb,40,1$' "$tmp/trace.csv"          # 810 -> 7g
grep -Eq '^pod-1,[0-9]+,4g.20gb,' "$tmp/trace.csv"          # 470 -> 4g
grep -Eq '^pod-2,[0-9]+,3g.20gb,' "$tmp/trace.csv"          # 320 -> 3g
grep -Eq '^pod-3,[0-9]+,2g.10gb,' "$tmp/trace.csv"          # 230 -> 2g
grep -Eq '^pod-4,[0-9]+,1g.5gb,' "$tmp/trace.csv"           # 110 -> 1g
grep -q '^gang-4,20,7g.40gb,100,4$' "$tmp/trace.csv"
grep -q '^gang-2,50,7g.40gb,45,2$' "$tmp/trace.csv"
end=$(awk -F, 'NR > 1 { for (i = 9; i <= 10; i++) if ($i + 0 > m) m = $i + 0 } END { print m }' "$tmp/pods.csv")
grep -q "^open,60,2g.10gb,$((end - 60)),1\$" "$tmp/trace.csv"  # capped at the trace end
! grep -Eq '^(cpu-|pend-|zero)' "$tmp/trace.csv"
grep -q '"ngpus":10,"gpus_per_node":4' "$tmp/cluster.json"

# memory mapping: 470 -> 3g (4 memory slices), time scale
"$M" import-alibaba --pods "$tmp/pods.csv" --mapping memory --time-scale 0.5 \
    --out "$tmp/trace_mem.csv" 2>/dev/null
grep -q '^pod-1,6.5,3g.20gb,' "$tmp/trace_mem.csv"

# whole-node mode keeps only the 4-GPU nodes
"$M" import-alibaba --pods "$tmp/pods.csv" --nodes "$tmp/nodes.csv" --gpus-per-node 4 \
    --node-mode whole --out /dev/null 2>"$tmp/err2.txt"
grep -q 'MIG cluster: 8 x A100-40GB' "$tmp/err2.txt"

# replay with every policy and check the schedule
check_schedule() {   # file
    awk -F, '
        BEGIN { ms["1g.5gb"] = 1; ms["2g.10gb"] = 2; ms["3g.20gb"] = 4; ms["4g.20gb"] = 4;
                ms["7g.40gb"] = 8 }
        NR == 1 { next }
        $3 < 0 { next }                                   # time-slice slot
        { if (!($4 in ms)) { print "unknown profile " $4; bad = 1; next }
          n++; g[n] = $2; s[n] = $3; e[n] = $3 + ms[$4]; b[n] = $5; f[n] = $6; id[n] = $1;
          if ($6 + 0 < $5 + 0) { print "segment ends before it begins: " $0; bad = 1 } }
        END {
          for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
            if (g[i] == g[j] && s[i] < e[j] && s[j] < e[i] && b[i] < f[j] && b[j] < f[i]) {
              print "overlap on GPU " g[i] ": " id[i] " [" b[i] "," f[i] ") and " id[j] " [" b[j] "," f[j] ")"
              bad = 1
            }
          exit bad
        }' "$1"
}
policies=$("$M" simulate --help | sed -n 's/^policies: *//p')
[ -n "$policies" ] || { echo "simulate --help lists no policies"; exit 1; }
for p in $policies; do
    "$M" simulate --trace "$tmp/trace.csv" --policy "$p" --model A100-40GB --gpus 10 \
        --gpus-per-node 4 --schedule-out "$tmp/sched-$p.csv" --metrics-out "$tmp/m-$p.json" \
        --quiet >"$tmp/sim-$p.txt" 2>&1 || { cat "$tmp/sim-$p.txt"; exit 1; }
    check_schedule "$tmp/sched-$p.csv"
    # every job that ran has a row; gangs one per GPU
    ran=$(tail -n +2 "$tmp/sched-$p.csv" | cut -d, -f1 | sort -u | wc -l)
    [ "$ran" -ge 20 ] || { echo "$p: only $ran jobs ran"; exit 1; }
    echo "simulate $p: ok ($ran jobs)"
done
[ "$(grep -c '^gang-4,' "$tmp/sched-best-fit.csv")" -eq 4 ]

# fill mode: every MIG policy, two seeds, JSON
"$M" import-alibaba --fill --pods "$tmp/pods.csv" --gpus 8 --gpus-per-node 4 --policy all \
    --seeds 1-2 --json "$tmp/fill.json" >"$tmp/fill.txt"
cat "$tmp/fill.txt"
grep -Eq '^best-fit +[0-9]' "$tmp/fill.txt"
grep -Eq '^fa +[0-9]' "$tmp/fill.txt"
! grep -Eq '^timeslice' "$tmp/fill.txt"
grep -q '"experiment":"alibaba-mig-fill"' "$tmp/fill.json"
if command -v python3 >/dev/null 2>&1; then
    python3 - "$tmp/fill.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["seeds"] == [1, 2] and d["ngpus"] == 8
for p in d["policies"]:
    assert len(p["runs"]) == 2
    for r in p["runs"]:
        c = r["curve"]["unalloc_compute_pct"]
        assert len(c) == 131 and abs(c[0] - 100) < 1e-9
        assert r["gpu_pods"] > 0
EOF
fi
"$M" import-alibaba --fill --pods "$tmp/pods.csv" --nodes "$tmp/nodes.csv" --gpus-per-node 4 \
    --policy best-fit --seeds 7 >/dev/null 2>&1

# errors: usage, bad options, a malformed row naming line and field
if "$M" import-alibaba --pods "$tmp/pods.csv" 2>/dev/null; then exit 1; fi
if "$M" import-alibaba --pods "$tmp/pods.csv" --out x --mapping slices 2>/dev/null; then exit 1; fi
if "$M" import-alibaba --fill --pods "$tmp/pods.csv" --gpus 4 --seeds 9-3 2>/dev/null; then exit 1; fi
if "$M" import-alibaba --fill --pods "$tmp/pods.csv" --gpus 4 --policy timeslice 2>/dev/null; then exit 1; fi
sed '3s/,470,/,4x0,/' "$tmp/pods.csv" >"$tmp/bad.csv"
if "$M" import-alibaba --pods "$tmp/bad.csv" --out "$tmp/x.csv" 2>"$tmp/bad.txt"; then exit 1; fi
cat "$tmp/bad.txt"
grep -q "bad.csv:3: field 'gpu_milli'" "$tmp/bad.txt"
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1,1,1,500\n' >"$tmp/nt.csv"
if "$M" import-alibaba --pods "$tmp/nt.csv" --out "$tmp/x.csv" 2>"$tmp/nt.txt"; then exit 1; fi
grep -q 'fill experiment' "$tmp/nt.txt"
"$M" import-alibaba --help | grep -q -- '--mapping'
echo "test_alibaba: ok"
