#!/usr/bin/env bash
# End-to-end smoke test of the Kubernetes integration path: real etcd,
# kube-apiserver and kube-scheduler (harness.sh), the migsched profile's
# HTTP extender (the stand-in for now), 4 nodes as API objects and 23 pods.
# Asserts:
#  - the 20 pods that fit are bound, each through the extender's bind (its
#    recorded ExtenderBindingArgs name the pod's UID and the node it got),
#    and no node holds more of a migsched.io resource than it advertises;
#  - a migsched-profile pod without migsched.io resources never reaches the
#    extender and is bound by kube-scheduler itself;
#  - the 2 pods that cannot fit stay Pending, with the extender's reasons in
#    their PodScheduled condition and a FailedScheduling event;
#  - a bind the extender answers with an Error is reported in a
#    FailedScheduling event and retried until the pod is bound;
#  - deleting a bound pod (a finished job) lets a pending one be bound;
#  - the requests kube-scheduler sent have the shapes of the committed
#    contract samples (tests/k8s/contract/); MS_K8S_RECORD_CONTRACT=1
#    re-records those samples from this run.
# MS_K8S_KEEP=1 keeps the harness dir (logs, recorded requests) for a look.
# Prints "k8s e2e: skipped (REASON)" and exits 77 (the suite's skip) when the binaries cannot be
# built here (Go < 1.26 or no module proxy) or MIGSCHED_K8S_SKIP is set.
set -eu
export PYTHONDONTWRITEBYTECODE=1  # no __pycache__ in the tree
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ms_e2e_begin ""

ms_e2e_tools show

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s.XXXXXX")
cleanup() {
    rc=$?
    bash "$here/harness.sh" stop "$D" || true
    if [ $rc -ne 0 ]; then
        for f in kube-scheduler standin; do
            echo "--- $f.log (tail)"; tail -n 25 "$D/$f.log" 2>/dev/null || true
        done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
bash "$here/harness.sh" start "$D"
# The first bind of one pod fails on purpose (smoke_check.py BIND_FAIL_POD).
bash "$here/harness.sh" standin "$D" --fail-first-bind mig-3g.20gb-1
. "$D/env"
echo "control plane up in $(( $(date +%s) - t0 )) s"

api() { ms_e2e_api "$@"; }

# The extender's identity has only what it needs: it may bind, not delete.
curl -s --max-time 30 -o /dev/null -w '%{http_code}' --cacert "$MS_K8S_CA" -H "Authorization: Bearer $MS_K8S_EXT_TOKEN" \
    -X DELETE "$MS_K8S_API/api/v1/nodes/none" | grep -qx 403 || fail "extender token is not restricted by RBAC"

# 21 units: 10 of 1g.5gb, 3 of 3g.20gb, 1 of 7g.40gb, 3 of 2g.10gb, 4 shares.
ms_e2e_fake_node node-a mig-1g.5gb=7
ms_e2e_fake_node node-b mig-1g.5gb=3 mig-3g.20gb=1
ms_e2e_fake_node node-c mig-7g.40gb=1 mig-2g.10gb=3
ms_e2e_fake_node node-d mig-3g.20gb=2 gpu-share=4
api GET /api/v1/nodes/node-a | grep -q '"migsched.io/mig-1g.5gb": "7"' || fail "node status.allocatable not kept on create"

pod() { # pod NAME SCHEDULER [RES]
    local lim=${3:+"\"resources\":{\"limits\":{\"migsched.io/$3\":\"1\"}},"}
    api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",
      \"metadata\":{\"name\":\"$1\"},
      \"spec\":{\"schedulerName\":\"$2\",\"containers\":[{\"name\":\"c\",$lim\"image\":\"registry.invalid/none\"}]}}" >/dev/null
}
fits=()
add() { local i; for ((i = 1; i <= $2; i++)); do fits+=("$1-$i"); pod "$1-$i" migsched "$1"; done; }
add mig-1g.5gb 10
add mig-3g.20gb 3
add mig-7g.40gb 1
add mig-2g.10gb 2
add gpu-share 4
pod plain migsched                 # no migsched.io resource: not the extender's
pod big-7g migsched mig-7g.40gb    # node-c's only 7g is taken: insufficient
pod no-4g migsched mig-4g.20gb     # no node has any: unresolvable
[ ${#fits[@]} -eq 20 ] || fail "test setup: ${#fits[@]} fitting pods, want 20"

# check STEP: reads the pod list (and events, contract log) and asserts.
check() {
    api GET /api/v1/namespaces/default/pods >"$D/pods.json"
    api GET /api/v1/nodes >"$D/nodes.json"
    api GET /apis/events.k8s.io/v1/namespaces/default/events >"$D/events.json"
    python3 "$here/smoke_check.py" "$1" "$D" "$here/contract" "${fits[@]}"
}
t1=$(date +%s)
for ((i = 0; ; i++)); do
    if check bound >"$D/check.out" 2>&1; then break; fi
    [ $i -lt 240 ] || { cat "$D/check.out"; fail "pods not scheduled as expected after 120 s"; }
    sleep 0.5
done
cat "$D/check.out"
echo "20 pods bound through the extender in $(( $(date +%s) - t1 )) s"

# A finished job frees its slice; the pending 7g pod then gets node-c.
# No kubelet confirms termination: a graceful delete would leave the pod
# Terminating for good, so delete at once.
api DELETE '/api/v1/namespaces/default/pods/mig-7g.40gb-1?gracePeriodSeconds=0' >/dev/null
t1=$(date +%s)
for ((i = 0; ; i++)); do
    if check freed >"$D/check.out" 2>&1; then break; fi
    [ $i -lt 240 ] || { cat "$D/check.out"; fail "pending 7g pod not bound 120 s after the 7g slice was freed"; }
    sleep 0.5
done
cat "$D/check.out"
echo "pending pod bound $(( $(date +%s) - t1 )) s after the delete"

if [ -n "${MS_K8S_RECORD_CONTRACT:-}" ]; then
    python3 "$here/smoke_check.py" record "$D" "$here/contract"
fi
python3 "$here/smoke_check.py" contract "$D" "$here/contract" || fail "contract samples"
echo "k8s e2e: passed in $(( $(date +%s) - t0 )) s"
