#!/usr/bin/env bash
# End to end: a stale leader's Binding. Two migschedd replicas with
# --leader-elect (Lease 4 s) as the extender of the real kube-scheduler
# (harness.sh), behind the readiness-routing stand-in for a Service
# (leader_proxy.py), as in test_e2e_failover.sh. Replica a leads with the
# failpoint MIGSCHEDD_EXT_FAIL=stall-before-binding:stale- (5 s between
# choosing its Binding's deadline, the end of its leadership, and sending
# it). The pod stale-1 is filtered and bound through a: its instance runs,
# the bind stalls and a is frozen there (kill -STOP) until b has taken the
# Lease and serves; then a is continued while kube-scheduler still waits
# for a's answer (its extender httpTimeout is 10 s). Asserts:
#  - a sends no Binding: its log says the bind failed because its
#    leadership ended before the Binding was sent, and has no "pod bound"
#    for stale-1 (with the deadline taken out a binds it, a replica that no
#    longer leads);
#  - stale-1 is bound once, by b (kube-scheduler's retry), and b's job for
#    it runs with the pod's migsched.io/job annotation;
#  - a lives on as a standby (its /readyz 503) and exits 0 on SIGTERM.
# Prints "k8s stale bind e2e: passed in N s", or "... skipped (REASON)"
# and exits 77 where the control plane cannot be built. MS_K8S_KEEP=1
# keeps the directory.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ms_e2e_begin "stale bind"
ms_e2e_bin MIGSCHEDD migschedd
ms_e2e_tools

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-stale-bind.XXXXXX")
pid_a= pid_b= pid_px=
# a is continued first: never left frozen
cleanup() { ms_e2e_finish $? "$D" "$pid_a $pid_b $pid_px" "migschedd-a migschedd-b kube-scheduler"; }
trap cleanup EXIT
t0=$(date +%s)
ms_e2e_proxied_plane
api() { ms_e2e_api "$@"; }
ready() { ms_e2e_ready "$@"; }
logged() { ms_e2e_logged "$1" "$2" "pod=$3"; }   # logged NAME MSG POD: lines with MSG for POD
ms_e2e_leader_and_standby MIGSCHEDD_EXT_FAIL=stall-before-binding:stale-
ms_e2e_fake_node node-0 mig-1g.5gb=7 mig-2g.10gb=3 mig-3g.20gb=2 mig-7g.40gb=1
echo "control plane, leader a and standby b up in $(( $(date +%s) - t0 )) s"

t1=$(date +%s)
api POST /api/v1/namespaces/default/pods '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"stale-1"},
  "spec":{"schedulerName":"migsched","containers":[{"name":"c",
    "resources":{"limits":{"migsched.io/mig-1g.5gb":"1"}},"image":"registry.invalid/none"}]}}' >/dev/null
for i in $(seq 1 150); do
    [ "$(logged a "failpoint stall-before-binding: the bind sleeps 5 s" stale-1)" -ge 1 ] && break
    sleep 0.1
done
[ "$(logged a "failpoint stall-before-binding: the bind sleeps 5 s" stale-1)" -ge 1 ] ||
    fail "a never reached its Binding for stale-1"
kill -STOP "$pid_a"
ts=$(ms_now)
for i in $(seq 1 150); do [ "$(ready "$pb")" = 200 ] && break; sleep 0.1; done
[ "$(ready "$pb")" = 200 ] || fail "b did not take over within 15 s of a's freeze"
echo "a, the leader, froze (SIGSTOP) in its bind of stale-1 before the Binding; b serves $(ms_since "$ts") s later"
kill -CONT "$pid_a"
tc=$(ms_now)

node=
for i in $(seq 1 300); do
    node=$(api GET /api/v1/namespaces/default/pods/stale-1 | python3 -c 'import json,sys
print(json.load(sys.stdin)["spec"].get("nodeName", ""))')
    [ -z "$node" ] || break
    sleep 0.1
done
[ -n "$node" ] || fail "stale-1 was never bound"
for i in $(seq 1 100); do [ "$(logged a "bind failed; rolled back" stale-1)" -ge 1 ] && break; sleep 0.1; done
n_a=$(logged a "pod bound" stale-1)
n_b=$(logged b "pod bound" stale-1)
[ "$n_a" = 0 ] || fail "a, no longer the leader, bound stale-1 after it was continued"
why=$(python3 - "$D/migschedd-a.log" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("msg") == "bind failed; rolled back" and o.get("pod") == "stale-1":
        print(o.get("why", ""))
EOF
)
case $why in
*"leadership ended before the binding was sent"*) ;;
*) fail "a's bind of stale-1 did not end for want of the leadership: '$why'" ;;
esac
[ "$n_b" = 1 ] || fail "b bound stale-1 $n_b times, want 1"
job=$(api GET /api/v1/namespaces/default/pods/stale-1 | python3 -c 'import json,sys
print(json.load(sys.stdin)["metadata"].get("annotations", {}).get("migsched.io/job", ""))')
curl -sf "http://127.0.0.1:$pb/v1/jobs/$job" | python3 -c 'import json,sys
sys.exit(0 if json.load(sys.stdin)["state"] == "running" else 1)' ||
    fail "stale-1's job '$job' is not running on b"
echo "a, continued, sent no Binding ('$why'); stale-1 bound once, by b, $(ms_since "$tc") s later (job $job running there)"
[ "$(ready "$pa")" = 503 ] || fail "a's /readyz is $(ready "$pa"), want 503 (a standby)"
kill -TERM "$pid_a"
rc=0; wait "$pid_a" || rc=$?
pid_a=
[ $rc = 0 ] || fail "a exited with $rc after SIGTERM"
echo "a answered as a standby and exited 0; the stale bind: passed in $(( $(date +%s) - t1 )) s"
echo "k8s stale bind e2e: passed in $(( $(date +%s) - t0 )) s"
