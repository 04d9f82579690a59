#!/usr/bin/env bash
# End to end: leader failover of migschedd --dra (docs/dra.md, "The
# allocator") on the real control plane of harness.sh (etcd,
# kube-apiserver, kube-scheduler and kube-controller-manager v1.37.2), API-only
# nodes with NVIDIA-style slices (dra_alloc_e2e.py). Two replicas, a and b,
# with --leader-elect on the Lease migsched/migschedd-dra (4 s), both as the
# ServiceAccount of deploy/kubernetes/dra/allocator/rbac.yaml; the webhook
# calls b (a standby answers it too). dra_failover_e2e.py checks:
#  - a leads and places four 3g.20gb pods (both A100s full); a 7g.40gb pod
#    waits gated;
#  - a is killed (-9); two 1g.5gb pods created in the leaderless window are
#    gated by b's webhook;
#  - b takes over (deciding) within 60 s of the kill (the Lease's 4 s and
#    its renewal are the expected part) and keeps a's four allocations as a
#    wrote them (same claims, devices, nodes); nothing is placed over them
#    while the GPUs are full;
#  - b runs with the failpoint MIGSCHEDD_DRA_FAIL=before-ungate: its first
#    placement (once a1's 3g pods are deleted) writes the claim's allocation
#    and exits 137 before the pod's ungate, a kill -9 mid-write; a third
#    replica c, started once b led, takes over, keeps that allocation as b
#    wrote it (same claim uid, same device) and the pod is ungated (by c,
#    or by d when c dies first, below) and bound by kube-scheduler;
#  - c runs with MIGSCHEDD_DRA_FAIL=between-writes: its first claim write
#    (as it takes over if a pod has room then, else once a2's 3g pods are
#    deleted) patches the claim's metadata (our finalizer and annotation)
#    and exits 137 before the status (the allocation); the claim is read
#    half-written, the pod gated; a fourth replica d, started once c led,
#    takes over, allocates that claim once (its own annotation, one
#    finalizer, reserved for the pod alone, not by kube-scheduler), and
#    ungates the pod, which is bound; a half-written claim (made by hand)
#    whose pod goes before it has room goes too;
#  - as the 3g pods are deleted, every waiting pod is allocated (by b, c,
#    then d), ungated and bound by kube-scheduler; never one memory slice
#    or device in two claims; in the end our finalizer and annotation only
#    on allocated claims.
# Prints "k8s dra failover e2e: passed in N s", or "... skipped (REASON)"
# and exits 77 where the control plane cannot be built. MS_K8S_KEEP=1
# keeps DIR.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

ms_e2e_begin "dra failover" yaml
ms_e2e_bin MIGSCHEDD migschedd

ms_e2e_tools

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-dra-failover.XXXXXX")
pid_a= pid_b= pid_w= pid_wd=
cleanup() {
    rc=$?
    for p in $pid_a $pid_b $pid_w $pid_wd $(cat "$D/pid_c" "$D/pid_d" 2>/dev/null); do kill -TERM "$p" 2>/dev/null || true; done
    bash "$here/harness.sh" stop "$D" >/dev/null 2>&1 || true
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
        for f in migschedd-a.log migschedd-b.log migschedd-c.log migschedd-d.log kube-scheduler.log; do
            echo "--- $f (tail)"; tail -n 25 "$D/$f" 2>/dev/null || true
        done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
MS_K8S_KCM=resourceclaim-controller,garbage-collector-controller bash "$here/harness.sh" start "$D" >"$D/harness.log"
. "$D/env"
ms_dra_allocator_identity "$D"
pa=$(ms_free_port); pb=$(ms_free_port); pc=$(ms_free_port); pd=$(ms_free_port)
replica() { ms_dra_replica "$@"; }   # NAME PORT [ENV=VALUE]: its pid in pid_NAME (lib.sh)
st() { ms_dra_st "$@"; }
replica a "$pa"
for i in $(seq 1 150); do st "$pa" 2>/dev/null | grep -q '"deciding":true' && break; sleep 0.2; done
st "$pa" | grep -q '"deciding":true' || fail "replica a never led"
replica b "$pb" MIGSCHEDD_DRA_FAIL=before-ungate
for i in $(seq 1 150); do curl -sf --max-time 5 --cacert "$MS_K8S_CA" "https://127.0.0.1:$pb/dra/readyz" >/dev/null && break; sleep 0.2; done
st "$pb" | grep -q '"deciding":false' || fail "replica b is not a standby: $(st "$pb")"
echo "control plane, leader a and standby b up in $(( $(date +%s) - t0 )) s"

python3 "$here/dra_failover_e2e.py" before "$D" "https://127.0.0.1:$pb" || fail "dra_failover_e2e.py before"
kill -KILL "$pid_a"
date +%s.%N >"$D/killed_at"
wait "$pid_a" 2>/dev/null || true
pid_a=
echo "replica a (the leader) killed with -9"
# c starts once b leads (so that b, with the failpoint, is the one that
# takes over), in the background: the leaderless window is the test's;
# d likewise once c leads (c, with its failpoint, takes over from b): seen
# in c's log, since c may die at its failpoint within milliseconds of
# taking over, before /dra/status is polled again
( for i in $(seq 1 300); do st "$pb" 2>/dev/null | grep -q '"deciding":true' && break; sleep 0.2; done
  replica c "$pc" MIGSCHEDD_DRA_FAIL=between-writes
  echo "$pid_c" >"$D/pid_c"
  rc=0; wait "$pid_c" || rc=$?
  echo "$rc" >"$D/rc_c" ) &
pid_w=$!
( for i in $(seq 1 600); do grep -q '"dra: deciding"' "$D/migschedd-c.log" 2>/dev/null && break; sleep 0.2; done
  replica d "$pd"
  echo "$pid_d" >"$D/pid_d"
  rc=0; wait "$pid_d" || rc=$?
  echo "$rc" >"$D/rc_d" ) &
pid_wd=$!
python3 "$here/dra_failover_e2e.py" after "$D" "https://127.0.0.1:$pb" "https://127.0.0.1:$pc" "https://127.0.0.1:$pd" ||
    fail "dra_failover_e2e.py after"
grep -q '"dra: deciding"' "$D/migschedd-b.log" || fail "b's log does not say it decides"
grep -q '"dra: failpoint before-ungate: exiting"' "$D/migschedd-b.log" || fail "b's failpoint never fired"
rc=0; wait "$pid_b" 2>/dev/null || rc=$?
[ "$rc" = 137 ] || fail "b exited with $rc, not 137 at its failpoint"
pid_b=
grep -q '"dra: deciding"' "$D/migschedd-c.log" || fail "c's log does not say it decides"
grep -q '"dra: failpoint between-writes: exiting"' "$D/migschedd-c.log" || fail "c's failpoint never fired"
wait "$pid_w" || true
pid_w=
rm -f "$D/pid_c"
[ "$(cat "$D/rc_c" 2>/dev/null)" = 137 ] || fail "c exited with $(cat "$D/rc_c" 2>/dev/null), not 137 at its failpoint"
grep -q '"dra: deciding"' "$D/migschedd-d.log" || fail "d's log does not say it decides"
echo "migschedd d /dra/status: $(st "$pd")"
kill -TERM "$(cat "$D/pid_d")"
wait "$pid_wd" || true
pid_wd=
rm -f "$D/pid_d"
[ "$(cat "$D/rc_d" 2>/dev/null)" = 0 ] || fail "migschedd d exited with $(cat "$D/rc_d" 2>/dev/null) after SIGTERM"
echo "k8s dra failover e2e: passed in $(( $(date +%s) - t0 )) s"
