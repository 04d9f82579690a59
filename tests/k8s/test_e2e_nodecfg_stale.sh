#!/usr/bin/env bash
# End to end: a stale leader's node write (the node MIG layout loop,
# src/service/kctl_nodes.c). Two migschedd replicas with --leader-elect
# (Lease 4 s) and the same cluster policy (two GPU Operator nodes of 8
# A100-40GB in inference-peak) against the real kube-apiserver and
# kube-scheduler (harness.sh) and the fake mig-manager. Replica a leads
# with the failpoint MIGSCHEDD_KCTL_FAIL=stall-before-node-write:gpu-0 (5 s
# between a node write's deadline, the end of its leadership, and its
# request). A 7g pod no node can host makes a switch gpu-0 to training:
# a's first write to gpu-0 (its cordon) stalls, a is frozen there (kill
# -STOP) until b holds the Lease and has written gpu-0 itself, then
# continued. Asserts:
#  - a sends nothing: its log says the write was refused because its
#    leadership ended before the request was sent, and has no node layout
#    action after it (with the deadline taken out a patches gpu-0, a
#    replica that no longer leads);
#  - b completes the switch (mig-manager applied training on gpu-0, the
#    node uncordoned) and the pod is bound to gpu-0;
#  - a lives on as a standby and exits 0 on SIGTERM.
# Prints "k8s nodecfg stale e2e: passed in N s", or "... skipped (REASON)"
# and exits 77 where the control plane cannot be built. MS_K8S_KEEP=1
# keeps the directory.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ms_e2e_begin "nodecfg stale"
ms_e2e_bin MIGSCHED migsched
ms_e2e_bin MIGSCHEDD migschedd
ms_e2e_tools

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-nodecfg-stale.XXXXXX")
pid_a= pid_b= MIGMGR_PID=
# a is continued first: never left frozen
cleanup() { ms_e2e_finish $? "$D" "$pid_a $pid_b $MIGMGR_PID" "migschedd-a migschedd-b mig-manager"; }
trap cleanup EXIT
t0=$(date +%s)
bash "$here/harness.sh" start "$D" >/dev/null
. "$D/env"
api() { ms_e2e_api "$@"; }
ms_e2e_gpu_operator "gpu-0 gpu-1" --delay 1

replica() { # replica NAME [ENV=VALUE...]: ms_e2e_replica with the cluster policy's options
    local name=$1
    shift
    ms_e2e_replica "$name" "$(ms_free_port)" "$@" -- --k8s-policy "$D/policy.yaml" --layout-period 1 \
        --layout-hysteresis 0 --layout-drain-timeout 600 --layout-apply-timeout 30
}
holder() {
    api GET /apis/coordination.k8s.io/v1/namespaces/migsched/leases/migschedd 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["spec"].get("holderIdentity", ""))' 2>/dev/null || true
}
count() { ms_e2e_logged "$@"; }   # count NAME MSG [KEY=VALUE]: lines with MSG (and KEY VALUE)
node_state() { # the node's mig.config label and whether it is cordoned
    api GET "/api/v1/nodes/$1" | python3 -c 'import json,sys
n = json.load(sys.stdin)
print(n["metadata"].get("labels", {}).get("nvidia.com/mig.config", ""), bool(n["spec"].get("unschedulable")))'
}

replica a MIGSCHEDD_KCTL_FAIL=stall-before-node-write:gpu-0
for i in $(seq 1 100); do [ "$(holder)" = migschedd-a ] && break; sleep 0.2; done
[ "$(holder)" = migschedd-a ] || fail "replica a never took the Lease"
replica b
echo "control plane, leader a and standby b up in $(( $(date +%s) - t0 )) s"

t1=$(date +%s)
api POST /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big-1"},
  "spec":{"containers":[{"name":"c","image":"registry.invalid/none",
    "resources":{"limits":{"nvidia.com/mig-7g.40gb":"1"}}}]}}' >/dev/null
stall="failpoint stall-before-node-write: the writer sleeps 5 s"
for i in $(seq 1 300); do [ "$(count a "$stall")" -ge 1 ] && break; sleep 0.1; done
[ "$(count a "$stall")" -ge 1 ] || fail "a never came to a write to gpu-0"
kill -STOP "$pid_a"
ts=$(ms_now)
n_a=$(count a "node layout action")
for i in $(seq 1 200); do [ "$(holder)" = migschedd-b ] && break; sleep 0.1; done
[ "$(holder)" = migschedd-b ] || fail "b did not take the Lease within 20 s of a's freeze"
for i in $(seq 1 200); do [ "$(count b "node layout action" node=gpu-0)" -ge 1 ] && break; sleep 0.1; done
[ "$(count b "node layout action" node=gpu-0)" -ge 1 ] || fail "b, the leader, did not act on gpu-0"
echo "a froze (SIGSTOP) before its write to gpu-0; b leads and acted on gpu-0 $(ms_since "$ts") s later"
kill -CONT "$pid_a"

refused="write refused: not the leader"
for i in $(seq 1 100); do [ "$(count a "$refused" path=/api/v1/nodes/gpu-0)" -ge 1 ] && break; sleep 0.1; done
[ "$(count a "$refused" path=/api/v1/nodes/gpu-0)" -ge 1 ] ||
    fail "a, no longer the leader, did not refuse its write to gpu-0 (it sent it)"
for i in $(seq 1 120); do
    grep -q '"node": "gpu-0", "config": "training", "state": "success"' "$D/mig.jsonl" 2>/dev/null &&
        [ "$(node_state gpu-0)" = "training False" ] && break
    sleep 0.5
done
[ "$(node_state gpu-0)" = "training False" ] || fail "gpu-0 is '$(node_state gpu-0)', want training and uncordoned"
for i in $(seq 1 120); do
    api GET /api/v1/namespaces/default/pods/big-1 | grep -q '"nodeName": "gpu-0"' && break
    sleep 0.5
done
api GET /api/v1/namespaces/default/pods/big-1 | grep -q '"nodeName": "gpu-0"' || fail "big-1 not bound to gpu-0"
[ "$(count a "node layout action")" = "$n_a" ] || fail "a acted on nodes after it was continued"
[ "$(node_state gpu-1)" = "inference-peak False" ] || fail "gpu-1 is '$(node_state gpu-1)': switched or cordoned too"
echo "a, continued, sent nothing (its write refused); b switched gpu-0 and big-1 is bound there, $(( $(date +%s) - t1 )) s"
[ "$(holder)" = migschedd-b ] || fail "the Lease is '$(holder)', want migschedd-b"
kill -TERM "$pid_a"
rc=0; wait "$pid_a" || rc=$?
pid_a=
[ $rc = 0 ] || fail "a exited with $rc after SIGTERM"
echo "k8s nodecfg stale e2e: passed in $(( $(date +%s) - t0 )) s"
