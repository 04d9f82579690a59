#!/usr/bin/env bash
# End-to-end test of migschedd's preemption of pods (--preempt with
# --kube-api; docs/kubernetes.md, "Preemption"): real etcd, kube-apiserver,
# kube-scheduler and kube-controller-manager's disruption controller
# (harness.sh), migschedd --backend sim as the extender of the `migsched`
# profile on one API node of one A100-40GB (7 memory slices of 1g.5gb).
# Seven pods of priority 0 fill the GPU (4 app=guarded under a
# PodDisruptionBudget of minAvailable 4, 3 app=free); their status is set
# Running and Ready by hand (no kubelet), since the Eviction API ignores PDBs
# for Pending pods and the disruption controller counts only Ready pods.
# Asserts:
#  - a pod of priority 1000 with preemptionPolicy Never stays Pending and
#    evicts nothing;
#  - a pod of priority 1000 (1g) is bound within 40 s onto the room of
#    exactly one evicted pod, an app=free one: migschedd's first choice, the
#    youngest pod (a guarded one, bound last on purpose), is refused by the
#    dry run (429, logged) and the next filter takes a free one; the
#    preemptor's placement annotation is the victim's,
#    migsched_preemptions_total{tenant="default"} is 1 and /v1/events has
#    one "preempted" event for the victim's job, by the preemptor's job,
#    though the answer to that eviction never reached migschedd
#    (api_fault_proxy.py --lose-evict 1: the pod's state settles it);
#    kube-scheduler's FailedScheduling event for it carries the filter's
#    reason meanwhile, "migsched: ... evicting 1 pod(s) ..."; h1 carries
#    migsched.io/preempt-retry, the nudge that made kube-scheduler try it
#    again after the refusal and after f3's release (kube-scheduler retries
#    a pod an extender turned down on a cluster event only: without the
#    nudges h1 could wait five minutes);
#  - a pod of priority 1000 asking for the whole GPU (7g.40gb), whose only
#    victims are all six pods left, guarded ones included, stays Pending
#    for 15 s and nothing is evicted, not even the two free pods: the dry
#    run refuses the set as a whole (migschedd logs the victim set and the
#    429s). It comes once the refusal above has expired (30 s), so that the
#    set is searched at all: about 30 s of the test's ~70.
# kube-scheduler's own preemption (PostFilter) plays no part: the
# migsched.io resources are ignoredByScheduler, so its dry run fits the pod
# on the node without removing any pod and finds no victim ("preemption:
# expected at least one victim pod on node" in its log and events).
# Prints "k8s preempt e2e: skipped (REASON)" and exits 77 (the suite's
# skip) when the binaries cannot be built here (Go < 1.26 or no module
# proxy) or MIGSCHED_K8S_SKIP is set. MS_K8S_KEEP=1 keeps the harness dir
# (logs) for a look.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

ms_e2e_begin "preempt"
ms_e2e_bin MIGSCHEDD migschedd

ms_e2e_tools

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-preempt.XXXXXX")
MSPID=
cleanup() {
    rc=$?
    if [ -n "$MSPID" ]; then kill -TERM "$MSPID" 2>/dev/null || true; wait "$MSPID" 2>/dev/null || true; fi
    [ -z "${PXPID:-}" ] || kill "$PXPID" 2>/dev/null || true
    bash "$here/harness.sh" stop "$D" >/dev/null || true
    if [ $rc -ne 0 ]; then
        for f in kube-scheduler migschedd; do echo "--- $f.log (tail)"; tail -n 30 "$D/$f.log" 2>/dev/null || true; done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
port=$(ms_free_port)
# the disruption controller computes the PDB's status (its role bound to the
# controller-manager's identity)
MS_K8S_EXTENDER_URL=http://127.0.0.1:$port/extender MS_K8S_KCM=disruption MS_K8S_KCM_ROLES=disruption-controller \
    bash "$here/harness.sh" start "$D" >"$D/harness.log" 2>&1 || { tail -n 30 "$D/harness.log"; fail "harness.sh start failed"; }
. "$D/env"
# migschedd reaches the API server through api_fault_proxy.py, which
# throws away the answer to its first Eviction (the pod is evicted; the
# daemon is not told): the pod's state must settle it (ext_evict.c)
ms_e2e_fault_proxy --lose-evict 1
ms_e2e_extender_up "$port" --node node-0=1xA100-40GB --preempt --preempt-grace 0
echo "control plane and migschedd up in $(( $(date +%s) - t0 )) s"

api() { ms_e2e_api "$@"; }
now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
# one A100-40GB: the migsched.io resources' capacity (kube-scheduler
# ignores them; the extender counts)
ms_e2e_fake_node node-0 mig-1g.5gb=7 mig-2g.10gb=3 mig-3g.20gb=2 mig-4g.20gb=1 mig-7g.40gb=1
for pc in '"name":"high"},"value":1000' '"name":"high-never"},"value":1000,"preemptionPolicy":"Never"'; do
    api POST /apis/scheduling.k8s.io/v1/priorityclasses \
        "{\"apiVersion\":\"scheduling.k8s.io/v1\",\"kind\":\"PriorityClass\",\"metadata\":{$pc}" >/dev/null
done

pod() { # pod NAME PROFILE [APP-LABEL [PRIORITY-CLASS]]
    local md="\"name\":\"$1\"" pc=
    [ -z "${3:-}" ] || md="$md,\"labels\":{\"app\":\"$3\"}"
    [ -z "${4:-}" ] || pc="\"priorityClassName\":\"$4\","
    api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{$md},
      \"spec\":{$pc\"schedulerName\":\"migsched\",\"terminationGracePeriodSeconds\":0,\"containers\":[{\"name\":\"c\",
        \"resources\":{\"limits\":{\"migsched.io/$2\":\"1\"}},\"image\":\"registry.invalid/none\"}]}}" >/dev/null
}
# podq EXPR: EXPR (Python) over P, the default namespace's pods by name
podq() {
    api GET /api/v1/namespaces/default/pods >"$D/pods.json"
    python3 -c 'import json, sys
P = {p["metadata"]["name"]: p for p in json.load(open(sys.argv[1]))["items"]}
bound = lambda n: bool(P.get(n, {}).get("spec", {}).get("nodeName"))
ann = lambda n, k: P[n]["metadata"].get("annotations", {}).get("migsched.io/" + k, "")
print(eval(sys.argv[2]))' "$D/pods.json" "$1"
}
# until_true SECS WHAT EXPR: polls podq EXPR until it prints True
until_true() {
    local end=$(( $(date +%s) + $1 ))
    until [ "$(podq "$3")" = True ]; do
        [ "$(date +%s)" -lt "$end" ] || fail "$2 not within $1 s"
        sleep 0.25
    done
}
# holds SECS WHAT EXPR: podq EXPR prints True throughout SECS
holds() {
    local t=$(date +%s)
    while [ "$(date +%s)" -le $((t + $1)) ]; do
        [ "$(podq "$3")" = True ] || fail "$2 (after $(( $(date +%s) - t )) s)"
        sleep 0.25
    done
}
preemptions() {
    curl -sf "http://127.0.0.1:$port/metrics" | sed -n 's/^migsched_preemptions_total{tenant="default"} //p'
}

# The GPU filled by 7 pods of priority 0, in three steps: the victims are
# the youngest pods (the least run time lost), so g4, bound last, is
# migschedd's first choice for h1 and f3 its second: the PDB refuses g4 and
# h1 has to get f3 the next time round.
LOW="g1 g2 g3 f1 f2 f3 g4"
for p in g1 g2 g3; do pod "$p" mig-1g.5gb guarded; done
until_true 30 "g1-g3 bound" "all(bound(n) for n in 'g1 g2 g3'.split())"
for p in f1 f2 f3; do pod "$p" mig-1g.5gb free; done
until_true 30 "f1-f3 bound" "all(bound(n) for n in 'f1 f2 f3'.split())"
pod g4 mig-1g.5gb guarded
until_true 30 "g4 bound" "bound('g4')"
# Running and Ready, as a kubelet would report them
for p in $LOW; do
    api PATCH "/api/v1/namespaces/default/pods/$p/status" "{\"status\":{\"phase\":\"Running\",
      \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"lastTransitionTime\":\"$now\"}]}}" \
        application/strategic-merge-patch+json >/dev/null
done
podq "{n: (P[n]['spec'].get('priority'), ann(n, 'placement'), ann(n, 'job')) for n in '$LOW'.split()}" >"$D/low.txt"
python3 -c 'import ast, sys; sys.exit(any(v[0] != 0 for v in ast.literal_eval(open(sys.argv[1]).read()).values()))' \
    "$D/low.txt" || fail "the pods of no PriorityClass are not of priority 0: $(cat "$D/low.txt")"
api POST /apis/policy/v1/namespaces/default/poddisruptionbudgets '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget",
  "metadata":{"name":"guarded"},"spec":{"minAvailable":4,"selector":{"matchLabels":{"app":"guarded"}}}}' >/dev/null
for i in $(seq 1 120); do
    ok=$(api GET /apis/policy/v1/namespaces/default/poddisruptionbudgets/guarded | python3 -c 'import json, sys
b = json.load(sys.stdin); s = b.get("status", {})
print(s.get("observedGeneration", 0) >= b["metadata"]["generation"] and s.get("disruptionsAllowed") == 0
      and s.get("currentHealthy") == 4)')
    [ "$ok" != True ] || break
    sleep 0.25
done
[ "$ok" = True ] || fail "the PDB's status was not computed (4 healthy, 0 disruptions allowed) within 30 s"
echo "7 pods of priority 0 bound, Running and Ready; PDB guarded: 4 healthy, 0 disruptions allowed ($(( $(date +%s) - t0 )) s)"
ALL7="all(n in P for n in '$LOW'.split())"

# preemptionPolicy Never: pending, and nobody is evicted
pod hn mig-1g.5gb "" high-never
holds 8 "hn (preemptionPolicy Never) was bound or a pod was deleted" "not bound('hn') and $ALL7"
[ "$(preemptions)" = 0 ] || fail "preemptions counted for hn: $(preemptions)"
# hn out of the way: the room h1 frees must be h1's
api DELETE "/api/v1/namespaces/default/pods/hn?gracePeriodSeconds=0" >/dev/null
echo "hn (priority 1000, preemptionPolicy Never): Pending for 8 s, no pod evicted"

# priority 1000: g4's eviction is refused (dry run, 429), then f3 is
# evicted and h1 gets its room
t1=$(date +%s)
lines=$(wc -l <"$D/migschedd.log")
pod h1 mig-1g.5gb "" high
until_true 40 "h1 bound" "bound('h1')"
tail -n +"$((lines + 1))" "$D/migschedd.log" >"$D/h1.log"
gone=$(podq "' '.join(n for n in '$LOW'.split() if n not in P)")
[ "$(echo "$gone" | wc -w)" = 1 ] || fail "h1 bound with pods [$gone] gone (one was to be evicted)"
case $gone in f*) ;; *) fail "h1 evicted $gone, which the PDB protects";; esac
read -r vplace vjob < <(python3 -c 'import ast, sys; print(*ast.literal_eval(open(sys.argv[1]).read())[sys.argv[2]][1:])' "$D/low.txt" "$gone")
# the refusal was ours to tell: kube-scheduler retried h1 on migschedd's
# nudge (ext_nudge.c), an annotation on h1 (its last: a refusal or the
# victim's release), not on a five-minute flush
retry=$(podq "ann('h1', 'preempt-retry')")
case $retry in "eviction refused at "*|"victims gone at "*) ;;
    *) fail "h1 has no migsched.io/preempt-retry annotation of a nudge ('$retry')";; esac
hplace=$(podq "ann('h1', 'placement')")
[ -n "$hplace" ] && [ "$hplace" = "$vplace" ] || fail "h1's placement $hplace is not the one $gone had ($vplace)"
[ "$(preemptions)" = 1 ] || fail "migsched_preemptions_total{tenant=\"default\"} is $(preemptions) after h1, not 1"
[ "$(grep -c "^lose-evict default/$gone\$" "$D/proxy.log")" = 1 ] ||
    fail "the answer to $gone's eviction was not the one thrown away: $(cat "$D/proxy.log")"
h1job=$(podq "ann('h1', 'job')")
curl -sf "http://127.0.0.1:$port/v1/events?since=0&timeout=0" >"$D/events.json"
python3 - "$D/events.json" "$vjob" "$h1job" <<'EOF' || fail "the preempted event"
import json, sys
ev = [e for e in json.load(open(sys.argv[1]))["events"] if e["state"] == "preempted"]
if len(ev) != 1 or ev[0]["job"] != sys.argv[2] or ev[0].get("by") != sys.argv[3]:
    sys.exit("preempted events: %s (one of job %s by %s wanted)" % (ev, sys.argv[2], sys.argv[3]))
EOF
refused=$(python3 - "$D/h1.log" <<'EOF'
import json, sys
ls = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
print(" ".join(l["pod"] for l in ls if l["msg"] == "preempting: eviction not done" and l["status"] == 429))
EOF
)
case " $refused " in *" g4 "*) ;; *) fail "g4 (the youngest pod, guarded) was not refused on h1's way (refused: [$refused])";; esac
# the filter's answer while the evictions were under way, as kube-scheduler
# recorded it (its events are written asynchronously: a few seconds)
end=$(( $(date +%s) + 10 ))
until api GET "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dh1,reason%3DFailedScheduling" |
        grep -Eq 'migsched: [^".]*evicting 1 pod'; do
    [ "$(date +%s)" -lt "$end" ] || fail "no FailedScheduling event of h1 with the filter's 'evicting 1 pod(s)' reason"
    sleep 0.25
done
echo "h1 (priority 1000): bound in $(( $(date +%s) - t1 )) s on $gone's placement $hplace after the PDB refused [$refused]; 1 preemption, 1 preempted event by $h1job"

# The whole GPU for a pod of priority 1000: the only victims would be all 6
# pods of priority 0, guarded ones included. h1 (priority 1000, no victim)
# leaves first, or there would be no victim set to refuse; and h7 comes once
# the pods refused on h1's way may be victims again (30 s after their
# refusal, REFUSED_S in src/service/ext_preempt.c), or its search would
# find no set either.
api DELETE "/api/v1/namespaces/default/pods/h1?gracePeriodSeconds=0" >/dev/null
for i in $(seq 1 100); do
    st=$(curl -sf "http://127.0.0.1:$port/v1/jobs/$h1job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])') || st=gone
    [ "$st" != running ] && break
    sleep 0.1
done
[ "$st" != running ] || fail "h1 deleted but its job $h1job still runs"
SIX="' '.join(sorted(n for n in '$LOW'.split() if n in P)) == '$(echo "$LOW" | tr ' ' '\n' | grep -vx "$gone" | sort | tr '\n' ' ' | sed 's/ $//')'"
# set_refused_whole POD LOG SECONDS WANT: once the refusals logged in LOG
# have expired (30 s, REFUSED_S in src/service/ext_preempt.c, so that the
# set is searched at all), a 7g.40gb pod POD of class high: a set of the 6
# pods is chosen for it, refused whole (a line of the refusal matching the
# pattern WANT in migschedd's log), and for SECONDS nothing is bound or
# evicted; its log lines go to $D/POD.log.
set_refused_whole() {
    local lines
    python3 - "$2" <<'EOF'
import json, sys, time
t = max(json.loads(l)["ts"] for l in open(sys.argv[1]) if '"status":429' in l)
time.sleep(max(0.0, t + 30.5 - time.time()))
EOF
    lines=$(wc -l <"$D/migschedd.log")
    pod "$1" mig-7g.40gb "" high
    holds "$3" "$1 (the whole GPU) was bound or a pod was deleted" "not bound('$1') and $SIX"
    [ "$(preemptions)" = 1 ] || fail "migsched_preemptions_total{tenant=\"default\"} is $(preemptions) after $1, not 1"
    tail -n +"$((lines + 1))" "$D/migschedd.log" >"$D/$1.log"
    grep '"msg":"preempting: evicting pods' "$D/$1.log" | grep "\"pod\":\"$1\"" | grep -q '"victims":6' ||
        fail "no victim set of the 6 pods was chosen for $1 (nothing to refuse)"
    grep '"msg":"preempting: eviction not done"' "$D/$1.log" | grep -q "$4" ||
        fail "$1's set was not refused as expected ($4)"
}
set_refused_whole h7 "$D/h1.log" 15 '"status":429'
echo "h7 (priority 1000, 7g.40gb): Pending for 15 s, its 6 victims refused as a set (the budget gives none of its 4), no pod evicted"

# A budget that allows some disruptions, fewer than the set takes: with
# minAvailable 1 the 4 guarded pods may lose 3, and h7's set takes all 4.
# Each eviction's dry run alone passes; migschedd counts the set against
# the budget first (src/service/ext_pdb.c) and evicts none. A new pod (h7b)
# once the refusals above have expired, so that the set is searched again.
api PATCH /apis/policy/v1/namespaces/default/poddisruptionbudgets/guarded '{"spec":{"minAvailable":1}}' \
    application/merge-patch+json >/dev/null
for i in $(seq 1 120); do
    ok=$(api GET /apis/policy/v1/namespaces/default/poddisruptionbudgets/guarded | python3 -c 'import json, sys
b = json.load(sys.stdin); s = b.get("status", {})
print(s.get("observedGeneration", 0) >= b["metadata"]["generation"] and s.get("disruptionsAllowed") == 3)')
    [ "$ok" != True ] || break
    sleep 0.25
done
[ "$ok" = True ] || fail "the PDB's status did not come to 3 disruptions allowed within 30 s"
api DELETE "/api/v1/namespaces/default/pods/h7?gracePeriodSeconds=0" >/dev/null
set_refused_whole h7b "$D/h7.log" 10 '"budget":"guarded"'
echo "h7b (7g.40gb, the budget allowing 3 of its 4 guarded victims): Pending for 10 s, the set refused whole by the budget's count, no pod evicted"

kill -TERM "$MSPID"; wait "$MSPID" || fail "migschedd exited with $? after SIGTERM"
MSPID=
echo "k8s preempt e2e: passed in $(( $(date +%s) - t0 )) s (one free pod evicted for h1, the PDB's pods never, a set its budget cannot give whole never begun)"
