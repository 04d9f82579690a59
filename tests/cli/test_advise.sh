#!/usr/bin/env bash
# migsched advise: a node below the threshold is recommended for
# time-slicing and one above is not; latency-sensitive services that ran
# time-sliced are named for MIG; the gain is the simulator's own figures
# (advise's current and recommended metrics equal `migsched simulate` on the
# two clusters, and gain_pct is their relative difference, sign included);
# DCGM exporter text gives the same recommendation as the CSV; the
# recommended policy goes through k8s-config; bad input exits 1 naming
# file:line:field.
set -eu
M=${MIGSCHED:-build/migsched}
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v python3 >/dev/null || { echo "skip: python3 missing (scripts/deps/test/service.list)"; exit 77; }

# utilisation: node low ~15%, node high ~80%, node ts (time-sliced) ~50%
python3 - "$tmp" <<'PY'
import random, sys
d = sys.argv[1]
r = random.Random(7)
with open(d + "/util.csv", "w") as f, open(d + "/dcgm.txt", "w") as g:
    f.write("time,node,gpu,util,mem_used_gb\n")
    for t in range(0, 1800, 60):
        g.write("# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).\n# TYPE DCGM_FI_DEV_GPU_UTIL gauge\n")
        rows = []
        for node, lo, hi in (("low", 5, 25), ("high", 65, 95), ("ts", 40, 60)):
            for gpu in range(4):
                u = round(r.uniform(lo, hi), 1)
                m = round(r.uniform(1, 9), 1)
                f.write("%d,%s,%d,%s,%s\n" % (t, node, gpu, u, m))
                rows.append((node, gpu, u, m))
        for node, gpu, u, m in rows:
            g.write('DCGM_FI_DEV_GPU_UTIL{gpu="%d",UUID="GPU-%s-%d",pci_bus_id="00000000:%02d:00.0",'
                    'device="nvidia%d",modelName="NVIDIA A100-SXM4-40GB",Hostname="%s"} %s\n'
                    % (gpu, node, gpu, gpu, gpu, node, u))
        g.write('DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-x",GPU_I_PROFILE="1g.5gb",GPU_I_ID="7",Hostname="low"} 99\n')
        g.write("DCGM_FI_DEV_SM_CLOCK{gpu=\"0\",Hostname=\"low\"} 1410\n")
        for node, gpu, u, m in rows:
            g.write('DCGM_FI_DEV_FB_USED{gpu="%d",Hostname="%s"} %d\n' % (gpu, node, int(m * 1024)))
PY
"$M" gen-trace --jobs 400 --load 0.9 --gpus 12 --seed 3 -o "$tmp/t0.csv" >/dev/null
# every 5th job belongs to a latency-sensitive service
python3 - "$tmp/t0.csv" "$tmp/t.csv" <<'PY'
import sys
rows = open(sys.argv[1]).read().splitlines()
with open(sys.argv[2], "w") as f:
    f.write(rows[0] + ",latency_sensitive,service\n")
    for i, r in enumerate(rows[1:]):
        f.write(r + (",1,bert-%d\n" % (i % 2) if i % 5 == 0 else ",0,\n"))
PY
NODES=(--node low=4xA100-40GB --node high=4xA100-40GB --node ts=4xA100-40GB:timeslice=4)
"$M" advise "${NODES[@]}" --util "$tmp/util.csv" --trace "$tmp/t.csv" --json --policy-out "$tmp/rec.yaml" >"$tmp/a.json" ||
    fail "advise"
"$M" advise "${NODES[@]}" --util "$tmp/util.csv" --trace "$tmp/t.csv" >"$tmp/a.txt" || fail "advise text"
grep -q '^  low .*timeslice=4 ' "$tmp/a.txt" || fail "text: low not time-sliced: $(cat "$tmp/a.txt")"
grep -q '^  high .* keep ' "$tmp/a.txt" || fail "text: high not kept"
grep -q 'bert-0 ' "$tmp/a.txt" || fail "text: service not named"

# the simulations, independently
"$M" simulate --trace "$tmp/t0.csv" "${NODES[@]}" --metrics-out "$tmp/cur.json" >/dev/null || fail "simulate cur"
"$M" simulate --trace "$tmp/t0.csv" --node low=4xA100-40GB:timeslice=4 --node high=4xA100-40GB \
    --node ts=4xA100-40GB:timeslice=4 --metrics-out "$tmp/rec-noiso.json" >/dev/null || fail "simulate rec"
python3 - "$tmp" <<'PY' || fail "advise JSON"
import json, sys
d = sys.argv[1]
a = json.load(open(d + "/a.json"))
nodes = {n["name"]: n for n in a["nodes"]}
assert a["threshold_pct"] == 40 and a["policy"] == "fa+"
low, high, ts = nodes["low"], nodes["high"], nodes["ts"]
assert low["mean_util_pct"] < 40 and low["recommended"] == "timeslice=4" and low["change"], low
assert high["mean_util_pct"] >= 40 and high["recommended"] == "mig" and not high["change"], high
assert ts["recommended"] == "timeslice=4" and not ts["change"], ts
assert low["samples"] == high["samples"] == 120
assert high["layout"] in ("balanced", "inference-peak", "training") and 0 < high["layout_fit"] <= 1
assert low["layout"] is None
svc = {s["name"]: s for s in a["services"]}
assert set(svc) == {"bert-0", "bert-1"}, svc
assert svc["bert-0"]["jobs"] + svc["bert-1"]["jobs"] == 80, svc
assert sum(s["ran_time_sliced"] for s in svc.values()) > 0, "no latency job ran time-sliced now"
# the current run is exactly simulate's on the same cluster
cur = json.load(open(d + "/cur.json"))
for k in ("makespan_s", "mean_jct_s", "mean_wait_s", "p95_wait_s"):
    assert abs(a["current"][k] - cur[k]) <= 1e-6 * max(1, abs(cur[k])), (k, a["current"][k], cur[k])
# gain_pct is (cur - rec) / cur, its sign the simulations'
for k, g in a["gain_pct"].items():
    c, r = a["current"][k], a["recommended"][k]
    want = (c - r) / c * 100 if c > 0 else 0
    if k == "mean_utilization":
        want = -want
    assert abs(g - want) < 1e-3, (k, g, want)   # both from 6-decimal JSON
    assert (g > 0) == ((r < c) if k != "mean_utilization" else (r > c)) or g == 0, (k, g, c, r)
# isolation changes the recommended run: no latency-sensitive job may share
# a GPU in time, so it differs from the same cluster without isolation
rec_noiso = json.load(open(d + "/rec-noiso.json"))
assert any(abs(a["recommended"][k] - rec_noiso[k]) > 1e-9 for k in ("makespan_s", "mean_jct_s", "mean_wait_s")), \
    "isolation had no effect"
assert a["recommended"]["jobs_completed"] == 400 and a["recommended"]["jobs_rejected"] == 0
PY
# the recommended cluster is a k8s-config policy
"$M" k8s-config --policy "$tmp/rec.yaml" --labels >"$tmp/labels" || fail "rec.yaml does not check"
grep -qx 'low nvidia.com/mig.config=all-disabled nvidia.com/device-plugin.config=timeslice-4' "$tmp/labels" ||
    fail "labels: $(cat "$tmp/labels")"

# a threshold above every node: all go time-sliced but one stays on MIG for the services
"$M" advise "${NODES[@]}" --util "$tmp/util.csv" --trace "$tmp/t.csv" --threshold 100 --json >"$tmp/b.json"
python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
n = {x["name"]: x for x in a["nodes"]}
assert n["low"]["recommended"] == "timeslice=4" and n["high"]["recommended"] == "mig", n
assert a["recommended"]["jobs_rejected"] == 0
' "$tmp/b.json" || fail "threshold 100"
# threshold 0: nothing changes, so both runs are the same and every gain is 0
"$M" advise "${NODES[@]}" --util "$tmp/util.csv" --trace "$tmp/t0.csv" --threshold 0 --json >"$tmp/c.json"
python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
assert not any(x["change"] for x in a["nodes"]) and a["services"] == []
assert all(v == 0 for v in a["gain_pct"].values()), a["gain_pct"]
' "$tmp/c.json" || fail "threshold 0"

# DCGM text: the same samples, the same recommendation (MIG-instance lines skipped)
"$M" advise "${NODES[@]}" --dcgm "$tmp/dcgm.txt" --json >"$tmp/d.json" || fail "advise --dcgm"
python3 - "$tmp/a.json" "$tmp/d.json" <<'PY' || fail "DCGM differs from CSV"
import json, sys
a, d = (json.load(open(f)) for f in sys.argv[1:3])
for x, y in zip(a["nodes"], d["nodes"]):
    assert x["name"] == y["name"] and x["recommended"] == y["recommended"], (x, y)
    assert abs(x["mean_util_pct"] - y["mean_util_pct"]) < 1e-9 and x["samples"] == y["samples"], (x, y)
    assert abs(x["max_mem_used_gb"] - y["max_mem_used_gb"]) < 0.01, (x, y)
assert d["simulated"] is False
PY
"$M" advise "${NODES[@]}" --util "$tmp/util.csv" --csv | grep -qx 'node,low,mode,mig,timeslice=4' || fail "csv"

# --dcgm URL: one scrape over HTTP (libcurl) reads like the file; a 404 is an error
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
(cd "$tmp" && exec python3 -m http.server --bind 127.0.0.1 "$port" >/dev/null 2>&1) &
srv=$!
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 50); do
    curl -sf -o /dev/null "http://127.0.0.1:$port/dcgm.txt" 2>/dev/null && break
    sleep 0.1
done
"$M" advise "${NODES[@]}" --dcgm "http://127.0.0.1:$port/dcgm.txt" --json >"$tmp/u.json" || fail "advise --dcgm URL"
python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert [(n["name"], n["samples"], n["recommended"]) for n in a["nodes"]] == \
       [(n["name"], n["samples"], n["recommended"]) for n in b["nodes"]], (a, b)
' "$tmp/d.json" "$tmp/u.json" || fail "URL scrape differs from the file"
if "$M" advise "${NODES[@]}" --dcgm "http://127.0.0.1:$port/nothing" >/dev/null 2>"$tmp/err"; then
    fail "404 accepted"; fi
grep -q "HTTP status is not 200" "$tmp/err" || fail "404: $(cat "$tmp/err")"
kill "$srv" 2>/dev/null || true

# bad input: exit 1, file:line: field
bad() { # bad WHAT FILE-ARGS... -- PATTERN
    local pat=${*: -1}
    set -- "${@:1:$#-1}"
    if "$M" advise "${NODES[@]}" "$@" >/dev/null 2>"$tmp/err"; then fail "accepted: $*"; fi
    grep -q -- "$pat" "$tmp/err" || fail "$*: $(cat "$tmp/err")"
}
printf 'time,node,gpu,util\n0,low,0,50\n60,low,0,150\n' >"$tmp/u1.csv"
bad --util "$tmp/u1.csv" "u1.csv:3: field 'util': 150 is not a percentage"
printf 'time,node,gpu,util\n0,nosuch,0,50\n' >"$tmp/u2.csv"
bad --util "$tmp/u2.csv" "u2.csv:2: field 'node': 'nosuch' is not a node"
printf 'time,node,gpu,util\n0,low,4,50\n' >"$tmp/u3.csv"
bad --util "$tmp/u3.csv" "u3.csv:2: field 'gpu': 4 is not a GPU of node low"
printf 'time,node,util\n0,low,50\n' >"$tmp/u4.csv"
bad --util "$tmp/u4.csv" "u4.csv:1: field 'gpu': missing column"
printf 'time,node,gpu,util\n0,low,0,x\n' >"$tmp/u5.csv"
bad --util "$tmp/u5.csv" "u5.csv:2: field 'util': 'x' is not a number"
printf 'time,node,gpu,util,mem_used_gb\n0,low,0,5,99\n' >"$tmp/u6.csv"
bad --util "$tmp/u6.csv" "u6.csv:2: field 'mem_used_gb'"
printf 'DCGM_FI_DEV_GPU_UTIL{gpu="0",UUID="GPU-1"} 5\n' >"$tmp/d1.txt"
bad --dcgm "$tmp/d1.txt" "d1.txt:1: field 'Hostname'"
printf 'DCGM_FI_DEV_GPU_UTIL{gpu="0",Hostname="low"} five\n' >"$tmp/d2.txt"
bad --dcgm "$tmp/d2.txt" "d2.txt:1: field 'value'"
printf '# nothing\n' >"$tmp/d3.txt"
bad --dcgm "$tmp/d3.txt" "d3.txt:1: field 'DCGM_FI_DEV_GPU_UTIL': no GPU utilisation samples"
sed '2s/,1,bert/,maybe,bert/' "$tmp/t.csv" >"$tmp/t2.csv"   # row 2 is job 0, a bert job
bad --util "$tmp/util.csv" --trace "$tmp/t2.csv" "t2.csv:2: field 'latency_sensitive'"
set +e
"$M" advise --util "$tmp/util.csv" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no cluster: not 2"
"$M" advise "${NODES[@]}" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no samples: not 2"
"$M" advise "${NODES[@]}" --util "$tmp/util.csv" --threshold 101 >/dev/null 2>&1; [ $? -eq 2 ] || fail "threshold 101"
"$M" advise "${NODES[@]}" --util "$tmp/util.csv" --json --csv >/dev/null 2>&1; [ $? -eq 2 ] || fail "json+csv"
set -e
echo "ok: advise"
