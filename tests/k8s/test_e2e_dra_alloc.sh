#!/usr/bin/env bash
# End to end: migschedd --dra as the placement brain for Kubernetes DRA
# (docs/dra.md, "The allocator") on the real control plane of harness.sh
# (etcd, kube-apiserver, kube-scheduler and kube-controller-manager v1.37.2)
# with API-only nodes whose ResourceSlices the test publishes exactly as
# NVIDIA's driver does with DynamicMIG (one A100-40GB node, one H100-80GB
# node, and a NIC driver's slices on both). migschedd serves its mutating
# webhook over TLS (a certificate from the harness's CA) and acts as the
# service account of deploy/kubernetes/dra/allocator/rbac.yaml; the API server
# calls it for every pod. dra_alloc_e2e.py runs the workload and checks:
#  - the webhook gates a pod whose claim asks for a MIG device at creation,
#    and not a pod whose claim asks for a NIC;
#  - three 1g.5gb pods are allocated off start 0 (first fit's choice) and
#    a 4g.20gb then fits on the same A100 at start 0; each pod is bound by
#    kube-scheduler to the node of its allocation, the device of the
#    profile it asked;
#  - kube-scheduler's own allocator allocates the NIC claims meanwhile;
#  - migschedd killed (-9) and started again: it rebuilds every allocation
#    from the API server (what follows would overlap them otherwise);
#  - an allocation written by someone else (h1's 3g.40gb at start 4) is
#    counted: a 3g.40gb pod waits until that claim is deleted, then gets
#    start 4;
#  - a pod deleted: kube-controller-manager deletes its template claim and
#    the room goes to the pod waiting for it;
#  - the webhook's deadline: with migschedd's loop stuck 8 s (the failpoint
#    MIGSCHEDD_DRA_FAIL=hook-stall:slow-), a pod's creation returns in
#    2.5-4.5 s (--dra-webhook-timeout 3, before the API server's 5 s),
#    admitted unchanged, and migschedd places it once the loop is back;
#  - no device and no memory slice is ever held by two claims; our claims
#    carry the delete-protection finalizer and allocationTimestamp;
#  - the [I] points of the reference, on kube-scheduler itself: an
#    allocation without allocationTimestamp fails its PreBind for good;
#    PostFilter wipes an unreserved external allocation whose node fails
#    another filter and allocates anew; the counters of a claim someone
#    else allocated are honoured;
#  - the fence: with the webhook gone, kube-scheduler's allocator takes no
#    device of the managed driver (a claim migschedd refuses stays
#    unallocated though a node has room), and migschedd still places an
#    ungated pod whose claim it serves.
# Prints "k8s dra alloc e2e: passed in N s", or "... skipped (REASON)" and
# exits 77 where the control plane cannot be built (no Go >= 1.26 or module
# proxy, MIGSCHED_K8S_SKIP set). MS_K8S_KEEP=1 keeps DIR (every log);
# MIGSCHEDD_ARGS adds options (a mutant: --dra-fence false must fail it).
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

ms_e2e_begin "dra alloc" yaml
ms_e2e_bin MIGSCHEDD migschedd

ms_e2e_tools

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-dra-alloc.XXXXXX")
MSPID=
cleanup() {
    rc=$?
    [ -z "$MSPID" ] || kill -TERM "$MSPID" 2>/dev/null || true
    bash "$here/harness.sh" stop "$D" >/dev/null 2>&1 || true
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
        for f in migschedd.log kube-scheduler.log kube-controller-manager.log; do
            echo "--- $f (tail)"; tail -n 25 "$D/$f" 2>/dev/null || true
        done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
MS_K8S_KCM=resourceclaim-controller,garbage-collector-controller bash "$here/harness.sh" start "$D" >"$D/harness.log"
. "$D/env"

# the failpoint of run2's deadline step (dra_alloc_e2e.py, 3b): migschedd's
# loop stalls 8 s on the webhook's question about a pod named slow-*
export MIGSCHEDD_DRA_FAIL=hook-stall:slow-
# migschedd's serving certificate and identity (lib.sh)
ms_dra_allocator_identity "$D"
port=$(ms_free_port)
start_ms() {
    "$MIGSCHEDD" --dra --kube-api "$MS_K8S_API" --kube-ca "$MS_K8S_CA" --kube-token-file "$D/migschedd.token" \
        --listen "127.0.0.1:$port" \
        --tls-cert "$D/pki/migschedd.crt" --tls-key "$D/pki/migschedd.key" ${MIGSCHEDD_ARGS:-} 2>>"$D/migschedd.log" &
    MSPID=$!
    for i in $(seq 1 100); do st 2>/dev/null | grep -q '"deciding":true' && break; sleep 0.1; done
    st | grep -q '"deciding":true' || fail "migschedd --dra did not come up deciding"
}
st() { curl -sf --max-time 5 --cacert "$MS_K8S_CA" "https://127.0.0.1:$port/dra/status"; }
start_ms
echo "control plane and migschedd --dra up in $(( $(date +%s) - t0 )) s"

python3 "$here/dra_alloc_e2e.py" run1 "$D" "https://127.0.0.1:$port" || fail "dra_alloc_e2e.py run1"
# killed: the new one rebuilds every allocation from the API server
kill -KILL "$MSPID"
wait "$MSPID" 2>/dev/null || true
start_ms
echo "migschedd killed (-9) and started again: $(st | python3 -c 'import json,sys; d=json.load(sys.stdin); print("claims", d["claims"], "gpus", d["gpus"])')"
python3 "$here/dra_alloc_e2e.py" run2 "$D" "https://127.0.0.1:$port" || fail "dra_alloc_e2e.py run2"
echo "migschedd /dra/status: $(st)"
kill -TERM "$MSPID"
wait "$MSPID" || fail "migschedd exited with $? after SIGTERM"
MSPID=
echo "k8s dra alloc e2e: passed in $(( $(date +%s) - t0 )) s"
