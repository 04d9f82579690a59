#!/usr/bin/env bash
# The scale benchmark of issue 23 (docs/dra.md, "At 1,000 nodes"): NODES
# API-only nodes, each with one A100-40GB GPU published as NVIDIA's driver
# publishes it and a slice of two NICs (nic.example.com), on the real
# control plane (harness.sh with kube-controller-manager's resourceclaim
# controller); migschedd --dra (release build, its webhook, its fence, the
# ServiceAccount of deploy/kubernetes/dra/allocator/rbac.yaml, started as
# compare_dra.sh starts it); then PODS pods with one MIG claim (placed by
# migschedd) and, concurrently, PODS pods with one NIC claim (placed by
# kube-scheduler's own allocator), RATE pods/s of each kind, none deleted
# (the cluster has room for all: about 2.8 of each GPU's 8 memory slices
# when PODS = NODES). Every claim is listed about once a second. Prints one
# JSON line and a table (bench_dra_scale.py): pods allocated, submitted and
# bound per kind; gate-to-allocation p50/p90/p99/max from migschedd's
# /dra/status and creation-to-allocation from the API; devices or memory
# slices held by two claims at any sample and at the end; each phase's
# wall time.
#
#   bash tests/k8s/bench_dra_scale.sh [NODES [PODS]]   (default 1000 1000)
#
# RATE (default 2) pods/s of each kind; HOLD=MIN-MAX deletes each MIG pod
# MIN..MAX s after its allocation (departures: later pods reuse the devices). A benchmark, not a suite test: it
# never fails on a time; exit 1 only when a device or slice was held twice
# (or a step failed). MS_K8S_KEEP keeps the control plane's directory.
# Exits 77 with "skipped (REASON)" where the control plane cannot be built.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
NODES=${1:-1000}
PODS=${2:-1000}
RATE=${RATE:-2}
skip() { echo "dra scale benchmark: skipped ($*)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -z "${MIGSCHED_K8S_SKIP:-}" ] || skip "MIGSCHED_K8S_SKIP is set"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml missing"
MIGSCHEDD=${MIGSCHEDD:-$root/build/migschedd}
[ -x "$MIGSCHEDD" ] || fail "no $MIGSCHEDD (make all)"
out=$(bash "$here/build-tools.sh") || { echo "$out"; fail "build-tools.sh failed"; }
ms_k8s_bins_ok || skip "$(echo "$out" | sed -n 's/^skip: //p' | tail -n 1)"

D=
MSPID=
trap ms_bench_cleanup EXIT

echo "dra scale benchmark: $NODES nodes, $PODS + $PODS pods at $RATE/s each; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
t=$(ms_now)
D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-dra-scale.XXXXXX")
MS_K8S_KCM=resourceclaim-controller,garbage-collector-controller bash "$here/harness.sh" start "$D" >"$D/harness.log" ||
    fail "control plane ($D/harness.log)"
plane_s=$(ms_since "$t")
t=$(ms_now)
python3 "$here/bench_dra_scale.py" setup "$D" "$NODES" >&2 || fail "publishing the nodes and slices"
publish_s=$(ms_since "$t")

t=$(ms_now)
ms_dra_allocator_up
port=$MS_DRA_PORT
# deciding, and every node's GPU in its model (its first list can take a while at this size)
for i in $(seq 1 600); do
    curl -sf --max-time 5 --cacert "$MS_K8S_CA" "https://127.0.0.1:$port/dra/status" 2>/dev/null |
        python3 -c 'import json, sys; s = json.load(sys.stdin); sys.exit(0 if s["deciding"] and s["gpus"] >= int(sys.argv[1]) else 1)' "$NODES" 2>/dev/null &&
        break
    kill -0 "$MSPID" 2>/dev/null || fail "migschedd exited ($D/migschedd.log)"
    sleep 0.5
done
python3 "$here/dra_alloc_e2e.py" webhook "$D" "https://127.0.0.1:$port" >&2
sleep 3
migschedd_s=$(ms_since "$t")
echo "control plane ${plane_s} s, publishing ${publish_s} s, migschedd ready ${migschedd_s} s" >&2

rc=0
python3 "$here/bench_dra_scale.py" run "$D" "https://127.0.0.1:$port" "$PODS" "$RATE" \
    "{\"nodes\": $NODES, \"phases_s\": {\"control_plane\": $plane_s, \"publishing\": $publish_s, \"migschedd_ready\": $migschedd_s}}" || rc=$?
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
kill -TERM "$MSPID"; wait "$MSPID" || true; MSPID=
[ "$rc" -eq 0 ] || fail "a device or memory slice held by two claims (or the stream failed)"
