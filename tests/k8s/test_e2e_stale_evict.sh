#!/usr/bin/env bash
# End to end: a stale leader's Eviction (docs/kubernetes.md, "Preemption").
# Two migschedd replicas with --leader-elect (Lease 4 s) and --preempt
# --preempt-grace 0 as the extender of the real kube-scheduler
# (harness.sh), behind the readiness-routing stand-in for a Service
# (leader_proxy.py), as in test_e2e_stale_bind.sh; one API node of one
# A100-40GB. Seven pods of priority 0 (v-1..v-7) fill it; a pod of
# priority 1000 (hi) makes leader a evict one of them. a runs with the
# failpoint MIGSCHEDD_EXT_FAIL=stall-before-eviction:v- (5 s between its
# Eviction's deadline, the end of its leadership, and its request; the dry
# runs are not held) and is frozen there (kill -STOP) until b serves, then
# continued. Asserts:
#  - a sends no Eviction: its log says the eviction was not sent because
#    its leadership ended (with the deadline taken out it evicts, a replica
#    that no longer leads);
#  - b, asked again by kube-scheduler, makes the preemption: hi is bound,
#    exactly one of the seven is gone, b counts one preemption;
#  - a lives on as a standby (/readyz 503) and exits 0 on SIGTERM.
# Prints "k8s stale evict e2e: passed in N s", or "... skipped (REASON)"
# and exits 77 where the control plane cannot be built. MS_K8S_KEEP=1
# keeps the directory.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ms_e2e_begin "stale evict"
ms_e2e_bin MIGSCHEDD migschedd
ms_e2e_tools

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-stale-evict.XXXXXX")
pid_a= pid_b= pid_px=
# a is continued first: never left frozen
cleanup() { ms_e2e_finish $? "$D" "$pid_a $pid_b $pid_px" "migschedd-a migschedd-b kube-scheduler"; }
trap cleanup EXIT
t0=$(date +%s)
ms_e2e_proxied_plane
api() { ms_e2e_api "$@"; }
ready() { ms_e2e_ready "$@"; }
logged() { ms_e2e_logged "$1" "$2" pod; }   # logged NAME MSG: the pod of each line with MSG
bound() { api GET "/api/v1/namespaces/default/pods/$1" 2>/dev/null | grep -q '"nodeName": "node-0"'; }
pod() { # pod NAME [PRIORITY-CLASS]
    local pc=
    [ -z "${2:-}" ] || pc="\"priorityClassName\":\"$2\","
    api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\"},
      \"spec\":{$pc\"schedulerName\":\"migsched\",\"terminationGracePeriodSeconds\":0,\"containers\":[{\"name\":\"c\",
        \"resources\":{\"limits\":{\"migsched.io/mig-1g.5gb\":\"1\"}},\"image\":\"registry.invalid/none\"}]}}" >/dev/null
}
ms_e2e_leader_and_standby MIGSCHEDD_EXT_FAIL=stall-before-eviction:v- -- --preempt --preempt-grace 0
ms_e2e_fake_node node-0 mig-1g.5gb=7 mig-2g.10gb=3 mig-3g.20gb=2 mig-7g.40gb=1
api POST /apis/scheduling.k8s.io/v1/priorityclasses \
    '{"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass","metadata":{"name":"high"},"value":1000}' >/dev/null
echo "control plane, leader a and standby b up in $(( $(date +%s) - t0 )) s"

t1=$(date +%s)
for i in 1 2 3 4 5 6 7; do pod "v-$i"; done
for i in $(seq 1 300); do
    n=0
    for j in 1 2 3 4 5 6 7; do bound "v-$j" && n=$((n + 1)); done
    [ $n = 7 ] && break
    sleep 0.1
done
[ $n = 7 ] || fail "only $n of the seven low pods were bound"
pod hi high
stall="failpoint stall-before-eviction: the eviction sleeps 5 s"
for i in $(seq 1 300); do [ -n "$(logged a "$stall")" ] && break; sleep 0.1; done
victim=$(logged a "$stall" | head -n 1)
[ -n "$victim" ] || fail "a never came to an eviction for hi"
kill -STOP "$pid_a"
ts=$(ms_now)
for i in $(seq 1 150); do [ "$(ready "$pb")" = 200 ] && break; sleep 0.1; done
[ "$(ready "$pb")" = 200 ] || fail "b did not take over within 15 s of a's freeze"
echo "a froze (SIGSTOP) before evicting $victim for hi; b serves $(ms_since "$ts") s later"
kill -CONT "$pid_a"

notsent="eviction not sent: this replica's leadership ended before it"
for i in $(seq 1 100); do [ -n "$(logged a "$notsent")" ] && break; sleep 0.1; done
[ "$(logged a "$notsent")" = "$victim" ] ||
    fail "a, no longer the leader, did not hold back its eviction of $victim (it sent it): '$(logged a "$notsent")'"
for i in $(seq 1 400); do bound hi && break; sleep 0.1; done
bound hi || fail "hi was never bound"
gone=0
for j in 1 2 3 4 5 6 7; do api GET "/api/v1/namespaces/default/pods/v-$j" >/dev/null 2>&1 || gone=$((gone + 1)); done
[ $gone = 1 ] || fail "$gone of the seven low pods are gone, want 1"
pre=$(curl -sf "http://127.0.0.1:$pb/metrics" | sed -n 's/^migsched_preemptions_total{tenant="default"} //p')
[ "$pre" = 1 ] || fail "b counts '$pre' preemptions, want 1"
echo "a, continued, sent no Eviction; b preempted one pod and hi is bound, $(( $(date +%s) - t1 )) s"
[ "$(ready "$pa")" = 503 ] || fail "a's /readyz is $(ready "$pa"), want 503 (a standby)"
kill -TERM "$pid_a"
rc=0; wait "$pid_a" || rc=$?
pid_a=
[ $rc = 0 ] || fail "a exited with $rc after SIGTERM"
echo "k8s stale evict e2e: passed in $(( $(date +%s) - t0 )) s"
