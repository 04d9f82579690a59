#!/usr/bin/env bash
# End-to-end test of pod tenants and their quotas on the real control plane:
# etcd, kube-apiserver and kube-scheduler (harness.sh), migschedd --backend
# sim --kube-api as the extender of the `migsched` profile with the
# harness's least-privilege extender identity, tenants declared with
# `--tenant team-a:limit=3 --tenant team-b` and `--k8s-tenant-label
# migsched.io/tenant` (docs/tenants.md, docs/kubernetes.md "Tenants and
# priority of pods"). One API node node-0 (2 A100-40GB, 14 1g.5gb of room:
# no pod here is ever short of room, only of quota); namespaces team-a,
# team-b and team-c (not declared: its pods are the default tenant's).
# Asserts:
#  1. three 1g pods of team-a are bound (usage 3 = its limit);
#  2. a fourth team-a pod stays Pending for 10 s with migschedd's reason in
#     its PodScheduled condition, while a team-b pod created after it and a
#     team-c pod are bound;
#  3. GET /v1/tenants: team-a usage 3, limit 3, running 3, waiting 0 (the
#     pending pod is no queued job in extender mode), team-b usage 1, the
#     default tenant 1 (team-c's pod); /metrics has the migsched_tenant_*
#     series for both (promtool check metrics passes);
#  4. one bound team-a pod deleted: the pending one is bound within 30 s
#     (kube-scheduler retries on the deletion) and team-a's usage is 3 again;
#  5. the label overrides the namespace: a team-c pod labelled team-a stays
#     Pending (team-a is at its limit), a team-a pod labelled team-b is
#     bound, and their jobs carry those tenants;
#  6. the annotation migsched.io/checkpoint-s (docs/kubernetes.md,
#     "Preemption"), as kube-scheduler hands the pod to the extender: "300"
#     is bound, its job's request has checkpoint_s 300; "often" stays
#     Pending with the annotation named in its PodScheduled condition.
# Prints "k8s tenants e2e: skipped (REASON)" and exits 77 (the suite's skip) when the binaries cannot be
# built here (Go < 1.26 or no module proxy) or MIGSCHED_K8S_SKIP is set.
# MS_K8S_KEEP=1 keeps the harness dir (logs) for a look.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ms_e2e_begin "tenants"
ms_e2e_bin MIGSCHEDD migschedd

ms_e2e_tools show

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-ten.XXXXXX")
MSPID=
cleanup() {
    rc=$?
    if [ -n "$MSPID" ]; then kill -TERM "$MSPID" 2>/dev/null || true; wait "$MSPID" 2>/dev/null || true; fi
    bash "$here/harness.sh" stop "$D" || true
    if [ $rc -ne 0 ]; then
        [ ! -s "$D/tenants.json" ] || { echo "--- /v1/tenants (last read)"; cat "$D/tenants.json"; echo; }
        for f in kube-scheduler migschedd; do echo "--- $f.log (tail)"; tail -n 30 "$D/$f.log" 2>/dev/null || true; done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
port=$(ms_free_port)
MS=http://127.0.0.1:$port
MS_K8S_EXTENDER_URL=$MS/extender bash "$here/harness.sh" start "$D"
. "$D/env"
ms_e2e_extender_up "$port" --node node-0=2xA100-40GB --tenant team-a:limit=3 --tenant team-b --k8s-tenant-label migsched.io/tenant
echo "control plane and migschedd up in $(( $(date +%s) - t0 )) s"

api() { ms_e2e_api "$@"; }
ms_e2e_fake_node node-0 mig-1g.5gb=14 mig-2g.10gb=6 mig-3g.20gb=4
for ns in team-a team-b team-c; do
    api POST /api/v1/namespaces "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"$ns\"}}" >/dev/null
done

pod() { # pod NS NAME [TENANT-LABEL [CHECKPOINT-ANNOTATION]]: a pod of one mig-1g.5gb
    local labels= ann=
    [ -z "${3:-}" ] || labels=",\"labels\":{\"migsched.io/tenant\":\"$3\"}"
    [ -z "${4:-}" ] || ann=",\"annotations\":{\"migsched.io/checkpoint-s\":\"$4\"}"
    api POST "/api/v1/namespaces/$1/pods" "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",
      \"metadata\":{\"name\":\"$2\"$labels$ann},
      \"spec\":{\"schedulerName\":\"migsched\",\"containers\":[{\"name\":\"c\",
        \"resources\":{\"limits\":{\"migsched.io/mig-1g.5gb\":\"1\"}},\"image\":\"registry.invalid/none\"}]}}" >/dev/null
}
# pq NS NAME FIELD: the pod's node (node), job annotation (job) or
# PodScheduled condition's message (why); empty when it has none.
pq() {
    api GET "/api/v1/namespaces/$1/pods/$2" | python3 -c 'import json,sys
p = json.load(sys.stdin); f = sys.argv[1]
if f == "node": print(p["spec"].get("nodeName", ""))
elif f == "job": print(p["metadata"].get("annotations", {}).get("migsched.io/job", ""))
else: print(" ".join(c.get("message", "") for c in p.get("status", {}).get("conditions", []) if c["type"] == "PodScheduled"))' "$3"
}
# wait_bound SECONDS NS NAME...: every named pod bound within SECONDS
wait_bound() {
    local secs=$1 ns=$2 n i left
    shift 2
    for ((i = 0; i < secs * 5; i++)); do
        left=
        for n in "$@"; do [ -n "$(pq "$ns" "$n" node)" ] || left="$left $n"; done
        [ -n "$left" ] || return 0
        sleep 0.2
    done
    fail "$ns/${left# } not bound within $secs s"
}
# tenants: /v1/tenants into D/tenants.json; tf NAME FIELD reads one field
tenants() { curl -sf "$MS/v1/tenants" >"$D/tenants.json" || fail "GET /v1/tenants"; }
tf() { python3 -c 'import json,sys
t = [t for t in json.load(open(sys.argv[1]))["tenants"] if t["name"] == sys.argv[2]]
print(json.dumps(t[0][sys.argv[3]]) if t else "absent")' "$D/tenants.json" "$1" "$2"; }
# job_tenant NS NAME: the tenant of the bound pod's job in migschedd
job_tenant() {
    local job
    job=$(pq "$1" "$2" job)
    [ -n "$job" ] || fail "$1/$2 has no migsched.io/job annotation"
    curl -sf "$MS/v1/jobs/$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["tenant"])'
}
# The filter's answer for a pod whose tenant is at its limit names the
# limit (ext_loop.c, hold_best: ms_sched_tenant_holds), not "no room": the
# node has 11 free 1g slots.
LIMIT_WHY="migsched: the pod's tenant is at its limit"
# held_back SECONDS NS NAME: the pod stays unbound for SECONDS and its
# PodScheduled condition carries LIMIT_WHY by the end
held_back() {
    local i why
    for ((i = 0; i < $1 * 2; i++)); do
        [ -z "$(pq "$2" "$3" node)" ] || fail "$2/$3 was bound although its tenant is at its limit"
        sleep 0.5
    done
    why=$(pq "$2" "$3" why)
    echo "$why" | grep -Eq "$LIMIT_WHY" || fail "$2/$3's PodScheduled message is not migschedd's reason: '$why'"
    echo "$2/$3 Pending for $1 s: $why"
}

# --- 1. team-a up to its limit: 3 pods of 1 compute slice each ----------
t1=$(date +%s)
for i in 1 2 3; do pod team-a "a$i"; done
wait_bound 30 team-a a1 a2 a3
echo "1. team-a's three 1g pods bound ($(( $(date +%s) - t1 )) s)"

# --- 2. a fourth team-a pod is held back; team-b's and team-c's are not --
pod team-a a4
sleep 1   # a4 has been tried first
pod team-b b1
pod team-c c1
wait_bound 30 team-b b1
wait_bound 30 team-c c1
echo "2. team-b's b1 and team-c's c1 (created after a4) bound"
held_back 10 team-a a4

# --- 3. what migschedd reports ------------------------------------------
tenants
[ "$(tf team-a usage_slices)" = 3 ] && [ "$(tf team-a limit_slices)" = 3 ] && [ "$(tf team-a running)" = 3 ] ||
    fail "/v1/tenants: team-a is not usage 3, limit 3, running 3: $(cat "$D/tenants.json")"
# In extender mode kube-scheduler holds the pending pods' queue: a4 is no
# queued job in migschedd (its filter holds nothing), so team-a has no
# waiting job, and /v1/tenants cannot say that a pod of it waits.
[ "$(tf team-a waiting)" = 0 ] || fail "/v1/tenants: team-a waiting is not 0: $(cat "$D/tenants.json")"
[ "$(tf team-b usage_slices)" = 1 ] && [ "$(tf team-b limit_slices)" = null ] && [ "$(tf team-b running)" = 1 ] ||
    fail "/v1/tenants: team-b is not usage 1, no limit, running 1: $(cat "$D/tenants.json")"
[ "$(tf default usage_slices)" = 1 ] || fail "/v1/tenants: the default tenant (team-c's c1) is not usage 1: $(cat "$D/tenants.json")"
[ "$(tf team-c name)" = absent ] || fail "/v1/tenants: team-c, never declared, is listed: $(cat "$D/tenants.json")"
[ "$(job_tenant team-c c1)" = default ] || fail "team-c's c1: its job is not the default tenant's"
[ "$(job_tenant team-a a1)" = team-a ] || fail "team-a's a1: its job is not team-a's"
curl -sf "$MS/metrics" >"$D/metrics" || fail "GET /metrics"
for want in 'migsched_tenant_usage_slices{tenant="team-a"} 3' 'migsched_tenant_limit_slices{tenant="team-a"} 3' \
            'migsched_tenant_jobs{tenant="team-a",state="running"} 3' 'migsched_tenant_jobs{tenant="team-a",state="waiting"} 0' \
            'migsched_tenant_usage_slices{tenant="team-b"} 1' 'migsched_tenant_jobs{tenant="team-b",state="running"} 1' \
            'migsched_tenant_usage_slices{tenant="default"} 1'; do
    grep -qxF "$want" "$D/metrics" || fail "/metrics lacks '$want': $(grep migsched_tenant_ "$D/metrics")"
done
! grep -q 'migsched_tenant_limit_slices{tenant="team-b"}' "$D/metrics" || fail "/metrics: team-b has a limit series"
promtool check metrics <"$D/metrics" || fail "promtool check metrics"
echo "3. /v1/tenants and /metrics: team-a usage 3 of 3 (running 3, waiting 0), team-b 1, default 1; promtool ok"

# --- 4. a team-a pod goes: the held one takes its place -----------------
t1=$(date +%s)
api DELETE "/api/v1/namespaces/team-a/pods/a1?gracePeriodSeconds=0" >/dev/null
wait_bound 30 team-a a4
tenants
[ "$(tf team-a usage_slices)" = 3 ] && [ "$(tf team-a running)" = 3 ] ||
    fail "/v1/tenants after a1 went and a4 was bound: team-a is not usage 3, running 3: $(cat "$D/tenants.json")"
echo "4. a1 deleted: a4 bound $(( $(date +%s) - t1 )) s later; team-a usage 3 again"

# --- 5. the tenant label overrides the namespace ------------------------
# c-as-a: namespace team-c (no quota) labelled team-a (at its limit): held.
# a-as-b: namespace team-a labelled team-b: bound, a job of team-b's.
pod team-c c-as-a team-a
sleep 1
pod team-a a-as-b team-b
wait_bound 30 team-a a-as-b
[ "$(job_tenant team-a a-as-b)" = team-b ] || fail "team-a/a-as-b (label team-b): its job is not team-b's"
held_back 5 team-c c-as-a
tenants
[ "$(tf team-a usage_slices)" = 3 ] && [ "$(tf team-b usage_slices)" = 2 ] && [ "$(tf default usage_slices)" = 1 ] ||
    fail "/v1/tenants with the labelled pods: not team-a 3, team-b 2, default 1: $(cat "$D/tenants.json")"
echo "5. label migsched.io/tenant over the namespace: team-c/c-as-a held as team-a's, team-a/a-as-b bound as team-b's"

# --- 6. the checkpoint annotation reaches the job -----------------------
pod team-b b-ck "" 300
pod team-b b-bad "" often
wait_bound 30 team-b b-ck
job=$(pq team-b b-ck job)
ck=$(curl -sf "$MS/v1/jobs/$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["request"].get("checkpoint_s"))')
[ "$ck" = 300.0 ] || fail "team-b/b-ck (checkpoint-s 300): its job $job has checkpoint_s '$ck'"
for ((i = 0; i < 20; i++)); do
    [ -z "$(pq team-b b-bad node)" ] || fail "team-b/b-bad (checkpoint-s often) was bound"
    pq team-b b-bad why | grep -q "migsched.io/checkpoint-s must be seconds" && break
    sleep 0.5
done
why=$(pq team-b b-bad why)
echo "$why" | grep -q "migsched.io/checkpoint-s must be seconds" || fail "team-b/b-bad's PodScheduled message: '$why'"
echo "6. checkpoint-s 300 reached b-ck's job; 'often' kept b-bad Pending: $why"

kill -TERM "$MSPID"; wait "$MSPID" || fail "migschedd exited with $? after SIGTERM"
MSPID=
echo "k8s tenants e2e: passed in $(( $(date +%s) - t0 )) s (team-a's limit of 3 held for pods, by namespace and by label)"
