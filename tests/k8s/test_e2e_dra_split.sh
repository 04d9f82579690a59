#!/usr/bin/env bash
# End to end: two writers at once and repeated kills of migschedd --dra
# with --leader-elect (docs/dra.md, "The allocator") on the real control
# plane of harness.sh (etcd, kube-apiserver, kube-scheduler and
# kube-controller-manager v1.37.2), API-only nodes with NVIDIA-style
# slices (dra_alloc_e2e.py); replicas on the Lease migsched/migschedd-dra
# (4 s) as the ServiceAccount of deploy/kubernetes/dra/allocator/rbac.yaml
# (lib.sh's ms_dra_replica). dra_split_e2e.py checks:
#  - a stale leader: a leads, with the failpoint
#    MIGSCHEDD_DRA_FAIL=stall-before-status:stale- (5 s between the
#    leadership check of a claim's status write and its request); placing
#    s1 (claim stale-x, made by hand) it writes the metadata, checks that
#    it leads, stalls and is frozen there (kill -STOP); s1 is
#    deleted, s2 (7g.40gb) created; b takes over and places s2 on the one
#    7g.40gb device of the cluster; nobody writes stale-x meanwhile, so the
#    resourceVersion of a's pending status write is still good; a is
#    continued (kill -CONT): its write's deadline (the end of its lead) has
#    passed, so it refuses the write ("dra: write refused: not
#    the leader"), logs "no longer the leader" and "dra: no longer deciding
#    (not the leader)" before it reads b's allocation (no false "a device
#    in use overlaps another" from its own stale decision), and lives on as
#    a standby (exit 0 on SIGTERM at the end); stale-x stays as a left it, s2's claim as b wrote it (b's
#    annotation, one finalizer, reserved for s2), s2 bound once by
#    kube-scheduler; no device or memory slice in two claims;
#  - repeated kills: 24 pods (1g/2g/3g/7g, on four more nodes of four
#    GPUs) created one every 1.1 s while the leader is killed (-9) four
#    times, 1.5 s after each takeover, a new replica started after each kill
#    (the webhook pointed at it); in the end every pod allocated (its
#    profile, one finalizer of ours, one replica's annotation, reserved for
#    it alone), ungated and bound once by kube-scheduler; no device or
#    memory slice in two claims; no allocated claim that no pod reserves;
#    each killed replica had logged "dra: deciding"; every survivor exits 0
#    on SIGTERM.
# Prints "k8s dra split e2e: passed in N s", or "... skipped (REASON)" and
# exits 77 where the control plane cannot be built. MS_K8S_KEEP=1 keeps DIR.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

ms_e2e_begin "dra split" yaml
ms_e2e_bin MIGSCHEDD migschedd

ms_e2e_tools

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-dra-split.XXXXXX")
names="a b c d e f"
live= pid_py=
cleanup() {
    rc=$?
    for r in $names; do
        eval "p=\${pid_$r:-}"
        [ -z "$p" ] || { kill -CONT "$p"; kill -TERM "$p"; } 2>/dev/null || true   # a may be frozen
    done
    [ -z "$pid_py" ] || kill -TERM "$pid_py" 2>/dev/null || true
    bash "$here/harness.sh" stop "$D" >/dev/null 2>&1 || true
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
        for r in $names; do
            [ -f "$D/migschedd-$r.log" ] && { echo "--- migschedd-$r.log (tail)"; tail -n 25 "$D/migschedd-$r.log"; }
        done
        echo "--- kube-scheduler.log (tail)"; tail -n 25 "$D/kube-scheduler.log" 2>/dev/null || true
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
MS_K8S_KCM=resourceclaim-controller,garbage-collector-controller bash "$here/harness.sh" start "$D" >"$D/harness.log"
. "$D/env"
ms_dra_allocator_identity "$D"
ready() { curl -sf --max-time 5 --cacert "$MS_K8S_CA" "https://127.0.0.1:$1/dra/readyz" >/dev/null; }
# up NAME [ENV=VALUE]: a replica on a free port (port_NAME), answering
up() {
    local port i
    port=$(ms_free_port)
    eval "port_$1=$port"
    ms_dra_replica "$1" "$port" ${2:-}
    live="$live $1"
    for i in $(seq 1 150); do ready "$port" && return 0; sleep 0.2; done
    fail "replica $1 never answered /dra/readyz"
}
# leader: the name of the live replica that decides, within 30 s (else false)
leader() {
    local i r p
    for i in $(seq 1 150); do
        for r in $live; do
            eval "p=\$port_$r"
            ms_dra_st "$p" 2>/dev/null | grep -q '"deciding":true' && { echo "$r"; return 0; }
        done
        sleep 0.2
    done
    return 1
}
up a MIGSCHEDD_DRA_FAIL=stall-before-status:stale-
l=$(leader) || fail "replica a never led"
[ "$l" = a ] || fail "replica $l leads, not a"
up b
ms_dra_st "$port_b" | grep -q '"deciding":false' || fail "replica b is not a standby: $(ms_dra_st "$port_b")"
echo "control plane, leader a and standby b up in $(( $(date +%s) - t0 )) s"

t1=$(date +%s)
python3 "$here/dra_split_e2e.py" stale "$D" "https://127.0.0.1:$port_b" "$pid_a" "https://127.0.0.1:$port_a" ||
    fail "dra_split_e2e.py stale"
echo "a stale leader: passed in $(( $(date +%s) - t1 )) s"

t1=$(date +%s)
python3 "$here/dra_split_e2e.py" stream "$D" "$D/kills_done" &
pid_py=$!
killed=
for new in c d e f; do
    l=$(leader) || fail "no live replica ($live) decides within 30 s"
    sleep 1.5   # the leader places part of the stream: the pace of the kills, not a condition
    eval "p=\$pid_$l"
    kill -KILL "$p"
    tk=$(ms_now)
    wait "$p" 2>/dev/null || true
    eval "pid_$l="
    live=$(echo " $live " | sed "s/ $l / /")
    killed="$killed $l"
    up "$new"
    python3 "$here/dra_split_e2e.py" hook "$D" "https://127.0.0.1:$(eval echo \$port_$new)" || fail "webhook to $new"
    l2=$(leader) || fail "no live replica ($live) decides within 30 s of killing $l"
    echo "kill $(echo $killed | wc -w): leader $l killed (-9), $new started, $l2 decides $(ms_since "$tk") s after the kill"
done
touch "$D/kills_done"
rc=0; wait "$pid_py" || rc=$?
pid_py=
[ $rc = 0 ] || fail "dra_split_e2e.py stream"
for r in $killed; do
    grep -q '"dra: deciding"' "$D/migschedd-$r.log" || fail "killed replica $r never logged that it decides"
done
echo "repeated kills: passed in $(( $(date +%s) - t1 )) s"
for r in $live; do
    eval "p=\$pid_$r"
    kill -TERM "$p"
    rc=0; wait "$p" || rc=$?
    eval "pid_$r="
    [ $rc = 0 ] || fail "replica $r exited with $rc after SIGTERM"
done
echo "k8s dra split e2e: passed in $(( $(date +%s) - t0 )) s"
