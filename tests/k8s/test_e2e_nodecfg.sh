#!/usr/bin/env bash
# End-to-end test of the node MIG layout loop (src/control/nodecfg.c driven
# by migschedd's kctl.c) against a real kube-apiserver and kube-scheduler
# (harness.sh) and the fake GPU Operator mig-manager (fake_mig_manager.py).
# Three GPU Operator nodes of 8 A100-40GB run the inference-peak layout.
# Asserts:
#  - 7g pods that no node can host switch exactly one node to training
#    (cordoned, labelled, success, uncordoned), and kube-scheduler then
#    binds them there;
#  - a switch that mig-manager fails is reverted and the node uncordoned
#    with its old layout;
#  - a node that runs a GPU pod is cordoned but not relabelled until the
#    pod is gone, and nothing is evicted;
#  - migschedd held the Lease while doing it (leader election on, with the
#    RBAC deploy/ ships: the harness binds it to the extender identity), and
#    released it on SIGTERM.
# Prints "k8s nodecfg e2e: skipped (REASON)" and exits 77 (the suite's skip) when the binaries
# cannot be built here (as test_e2e_smoke.sh does).
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ms_e2e_begin "nodecfg"
ms_e2e_bin MIGSCHED migsched
ms_e2e_bin MIGSCHEDD migschedd
ms_e2e_tools

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-nodecfg.XXXXXX")
pids=()
cleanup() {
    rc=$?
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    bash "$here/harness.sh" stop "$D" || true
    if [ $rc -ne 0 ]; then
        for f in migschedd mig-manager; do echo "--- $f.log (tail)"; tail -n 30 "$D/$f.log" 2>/dev/null || true; done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
bash "$here/harness.sh" start "$D" >/dev/null
. "$D/env"

api() { ms_e2e_api "$@"; }
# three GPU Operator nodes of 8 A100-40GB in inference-peak, the policy
# naming them; mig-manager fails gpu-1's switch to training
ms_e2e_gpu_operator "gpu-0 gpu-1 gpu-2" --delay 1 --fail gpu-1:training
pids+=("$MIGMGR_PID")
port=$(ms_free_port)
"$MIGSCHEDD" --listen 127.0.0.1:$port --state-dir "$D/state" --backend sim --node x=1xA100-40GB \
    --kube-api "$MS_K8S_API" --kube-token-file "$D/pki/extender.token" --kube-ca "$MS_K8S_CA" \
    --k8s-policy "$D/policy.yaml" --leader-elect --lease migsched/migschedd --lease-duration 6 \
    --layout-period 1 --layout-hysteresis 0 --layout-drain-timeout 600 --layout-apply-timeout 30 \
    >"$D/migschedd.log" 2>&1 &
mpid=$!
pids+=($mpid)

pod() { # pod NAME RES [NODE]
    api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",
      \"metadata\":{\"name\":\"$1\"},
      \"spec\":{${3:+\"nodeName\":\"$3\",}\"containers\":[{\"name\":\"c\",\"image\":\"registry.invalid/none\",
        \"resources\":{\"limits\":{\"nvidia.com/$2\":\"1\"}}}]}}" >/dev/null
}
label() { api GET "/api/v1/nodes/$1" | python3 -c "import json,sys; n=json.load(sys.stdin); print(n['metadata'].get('labels',{}).get(sys.argv[1],''), bool(n['spec'].get('unschedulable')))" "$2"; }
wait_until() { # wait_until SECONDS WHAT COMMAND...
    local s=$1 what=$2 i; shift 2
    for ((i = 0; i < s * 2; i++)); do "$@" >/dev/null 2>&1 && return 0; sleep 0.5; done
    fail "$what (after $s s)"
}
bound_to() { api GET "/api/v1/namespaces/default/pods/$1" | grep -q "\"nodeName\": \"$2\""; }

# gpu-2 runs a GPU pod from the start (it is the last candidate for a switch)
pod busy mig-1g.5gb gpu-2

# 1. three 7g pods: one node (gpu-0, the first) switches to training
for i in 1 2 3; do pod big-$i mig-7g.40gb; done
wait_until 60 "a node switched to training" grep -q '"node": "gpu-0", "config": "training", "state": "success"' "$D/mig.jsonl"
for i in 1 2 3; do wait_until 60 "big-$i bound to gpu-0" bound_to big-$i gpu-0; done
[ "$(label gpu-0 nvidia.com/mig.config)" = "training False" ] || fail "gpu-0 not training and uncordoned"
for n in gpu-1 gpu-2; do
    [ "$(label $n nvidia.com/mig.config)" = "inference-peak False" ] || fail "$n was switched or cordoned too"
done
echo "demand switched gpu-0 to training; 3 pods bound"

# 2. 8 more 7g pods than gpu-0 holds: gpu-1 is tried, mig-manager fails, it is reverted
for i in 4 5 6 7 8 9 10 11 12; do pod big-$i mig-7g.40gb; done
wait_until 90 "gpu-1's failed switch reverted" grep -q '"node": "gpu-1", "config": "inference-peak", "state": "success"' "$D/mig.jsonl"
grep -q '"node": "gpu-1", "config": "training", "state": "failed"' "$D/mig.jsonl" || fail "gpu-1 never failed"
for ((i = 0; i < 60; i++)); do
    [ "$(label gpu-1 nvidia.com/mig.config)" = "inference-peak False" ] && break
    sleep 0.5
done
[ "$(label gpu-1 nvidia.com/mig.config)" = "inference-peak False" ] || fail "gpu-1 not back to inference-peak, uncordoned: $(label gpu-1 nvidia.com/mig.config)"
echo "a failed switch was reverted"

# 3. the 7g demand is still uncovered, so gpu-2 is next; it runs a GPU pod:
#    cordoned, not relabelled until the pod goes
for ((i = 0; i < 120; i++)); do
    [ "$(label gpu-2 nvidia.com/mig.config)" = "inference-peak True" ] && break
    sleep 0.5
done
[ "$(label gpu-2 nvidia.com/mig.config)" = "inference-peak True" ] || fail "gpu-2 not cordoned while busy"
sleep 4
[ "$(label gpu-2 nvidia.com/mig.config)" = "inference-peak True" ] || fail "gpu-2 relabelled while a GPU pod runs"
api GET /api/v1/namespaces/default/pods/busy >/dev/null || fail "the busy pod was evicted"
api DELETE '/api/v1/namespaces/default/pods/busy?gracePeriodSeconds=0' >/dev/null
wait_until 60 "gpu-2 switched once drained" grep -q '"node": "gpu-2", "config": "training", "state": "success"' "$D/mig.jsonl"
echo "a busy node was drained without eviction, then switched"

# 4. the Lease: held by this migschedd, released on SIGTERM
api GET /apis/coordination.k8s.io/v1/namespaces/migsched/leases/migschedd | grep -q '"holderIdentity": "[^"]' ||
    fail "no Lease holder"
kill -TERM $mpid
wait $mpid || fail "migschedd exited non-zero on SIGTERM"
api GET /apis/coordination.k8s.io/v1/namespaces/migsched/leases/migschedd | grep -q '"holderIdentity": ""' ||
    fail "the Lease was not released"
echo "the Lease was held and released"

echo "k8s nodecfg e2e: passed in $(( $(date +%s) - t0 )) s"
