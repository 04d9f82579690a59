#!/usr/bin/env bash
# End-to-end test of migschedd as kube-scheduler's extender: real etcd,
# kube-apiserver and kube-scheduler (harness.sh), migschedd --backend sim
# --kube-api as the extender of the `migsched` profile (filter, prioritize,
# bind), with the harness's least-privilege extender identity. 5 nodes as
# API objects (4 MIG nodes of 2 A100-40GB, one time-sliced node of 2 GPUs x
# 4 shares) and 3 rounds of pods (~260 in all), more than fit.
# Asserts, once scheduling has settled in each round (e2e_extender_check.py):
#  - every bound pod carries its instance's annotations (instance UUID,
#    profile, placement, GPU UUID, CDI reference), which match migschedd's
#    /v1/cluster; no two pods share an instance, no two instances overlap,
#    and migschedd runs exactly the bound pods' jobs;
#  - the pods that cannot fit stay Pending with the extender's reason in
#    their PodScheduled condition;
#  - deleting bound pods (jobs that finished) frees their instances (the
#    pod watch), and pending pods are then bound onto the freed room: some
#    new pods land on placements the deleted ones had;
#  - a pod that completes (status.phase Succeeded) frees its instance too,
#    and migschedd nudges the pods that waited longest for room (the
#    annotation migsched.io/retry: kube-scheduler may have retried them on
#    the status update before our watch freed the instance);
#  - migschedd reaches the API server through api_fault_proxy.py, which
#    loses the replies to its first two Bindings (the writes land) and
#    refuses the next two with a 503: the checks above hold all the same
#    (no faulted pod loses its instance), and those four pods end bound;
#  - a watch of the pods over the whole test never shows a MIG pod bound
#    without its annotations nor annotated while unbound: each bind is one
#    write (the Binding carries the annotations).
# Prints "k8s extender e2e: skipped (REASON)" and exits 77 (the suite's skip) when the binaries cannot be
# built here (Go < 1.26 or no module proxy) or MIGSCHED_K8S_SKIP is set.
# MS_K8S_KEEP=1 keeps the harness dir (logs) for a look.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

ms_e2e_begin "extender"
ms_e2e_bin MIGSCHEDD migschedd

ms_e2e_tools show

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-ext.XXXXXX")
MSPID=
WPID=
cleanup() {
    rc=$?
    if [ -n "$MSPID" ]; then kill -TERM "$MSPID" 2>/dev/null || true; wait "$MSPID" 2>/dev/null || true; fi
    [ -z "$WPID" ] || kill "$WPID" 2>/dev/null || true
    [ -z "${PXPID:-}" ] || kill "$PXPID" 2>/dev/null || true
    bash "$here/harness.sh" stop "$D" || true
    if [ $rc -ne 0 ]; then
        for f in kube-scheduler migschedd; do echo "--- $f.log (tail)"; tail -n 30 "$D/$f.log" 2>/dev/null || true; done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
port=$(ms_free_port)
MS_K8S_EXTENDER_URL=http://127.0.0.1:$port/extender bash "$here/harness.sh" start "$D"
. "$D/env"
NODES="--node node-0=2xA100-40GB --node node-1=2xA100-40GB --node node-2=2xA100-40GB --node node-3=2xA100-40GB
       --node node-ts=2xA100-40GB:timeslice=4"
# migschedd reaches the API server through api_fault_proxy.py: the replies
# to its first two Bindings are lost (the writes land), its next two
# Bindings are refused with a 503 (nothing lands). Neither kind may cost a
# pod its instance: a lost reply is checked against the pod (bound by us:
# success), a 503 keeps the instance for kube-scheduler's retry.
ms_e2e_fault_proxy --lose 2 --refuse 2
# shellcheck disable=SC2086
ms_e2e_extender_up "$port" $NODES
echo "control plane and migschedd up in $(( $(date +%s) - t0 )) s"
# A watch of the pods: every write to a pod is one event, so it shows
# whether a bind's instance (its annotations) came in the same write as
# its node (the Binding's annotations), checked at the end.
curl -sSN --cacert "$MS_K8S_CA" -H "Authorization: Bearer $MS_K8S_TOKEN" \
    "$MS_K8S_API/api/v1/namespaces/default/pods?watch=1" >"$D/watch.jsonl" 2>"$D/watch.err" &
WPID=$!

api() { ms_e2e_api "$@"; }
for n in 0 1 2 3; do ms_e2e_fake_node "node-$n" mig-1g.5gb=14 mig-2g.10gb=6 mig-3g.20gb=4; done
ms_e2e_fake_node node-ts gpu-share=8

pod() { # pod NAME RESOURCE
    api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",
      \"metadata\":{\"name\":\"$1\"},
      \"spec\":{\"schedulerName\":\"migsched\",\"containers\":[{\"name\":\"c\",
        \"resources\":{\"limits\":{\"migsched.io/$2\":\"1\"}},\"image\":\"registry.invalid/none\"}]}}" >/dev/null
}
# round R: N pods of each kind. 8 MIG GPUs have 64 memory slices: 1g takes
# 1, 2g 2, 3g.20gb 4; the time-sliced node 8 shares.
round() {
    local r=$1 i
    for ((i = 1; i <= $2; i++)); do
        pod "r$r-1g-$i" mig-1g.5gb
        pod "r$r-2g-$i" mig-2g.10gb
        pod "r$r-3g-$i" mig-3g.20gb
        [ $((i % 3)) -ne 0 ] || pod "r$r-sh-$i" gpu-share
    done
}
# settle STEP: waits until the bound count has not changed for 4 s and the
# checks hold; prints the check's line.
settle() {
    local last=-1 same=0 i line
    for ((i = 0; i < 240; i++)); do
        api GET /api/v1/namespaces/default/pods >"$D/pods.json"
        curl -sf "http://127.0.0.1:$port/v1/cluster" >"$D/cluster.json"
        curl -sf "http://127.0.0.1:$port/v1/jobs?state=running&limit=1000" >"$D/running.json"
        if line=$(python3 "$here/e2e_extender_check.py" check "$D" 2>"$D/check.err"); then
            n=$(echo "$line" | awk '{print $2}')
            if [ "$n" = "$last" ]; then same=$((same + 1)); else same=0; last=$n; fi
            [ $same -lt 8 ] || { echo "$line"; return 0; }
        fi
        sleep 0.5
    done
    # on stderr: a caller's $(settle ...) would swallow stdout
    cat "$D/check.err" >&2
    fail "$1: scheduling did not settle with the checks holding within 120 s" >&2
}
bound_names() { python3 -c 'import json,sys
for p in json.load(open(sys.argv[1]))["items"]:
    if p["spec"].get("nodeName"): print(p["metadata"]["name"])' "$D/pods.json"; }

t1=$(date +%s)
round 1 30     # 100 pods: 30 of 1g, 2g, 3g (210 slices asked of 64) and 10 shares (8 fit)
line=$(settle "round 1")
echo "round 1: $line ($(( $(date +%s) - t1 )) s)"
b1=$(echo "$line" | awk '{print $2}'); p1=$(echo "$line" | awk '{print $4}')
[ "$p1" -gt 0 ] || fail "round 1: every pod fit; the test wants some that cannot"
[ "$b1" -ge 30 ] || fail "round 1: only $b1 pods bound"
python3 - "$D/pods.json" <<'EOF' || fail "round 1: a pending pod's reason is not the extender's no-room reason"
import json, sys
msgs = [c.get("message", "") for p in json.load(open(sys.argv[1]))["items"] if not p["spec"].get("nodeName")
        for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"]
sys.exit(0 if msgs and all("migsched: no room" in m or "migsched: not enough" in m for m in msgs) else 1)
EOF
echo "$line" | tr ' ' '\n' | sed -n '6p' | tr ',' '\n' | sort >"$D/places1"

# A bind kube-scheduler repeats (it gave up waiting for our answer) for a
# pod bound already: success, and the pod keeps its instance.
read -r rname ruid rnode rjob < <(python3 -c 'import json,sys
for p in json.load(open(sys.argv[1]))["items"]:
    if p["spec"].get("nodeName") and "-2g-" in p["metadata"]["name"]:
        m = p["metadata"]; print(m["name"], m["uid"], p["spec"]["nodeName"], m["annotations"]["migsched.io/job"]); break' "$D/pods.json")
r=$(curl -sf -XPOST "http://127.0.0.1:$port/extender/bind" \
    -d "{\"PodName\":\"$rname\",\"PodNamespace\":\"default\",\"PodUID\":\"$ruid\",\"Node\":\"$rnode\"}")
[ "$r" = '{"Error":""}' ] || fail "a repeated bind of $rname: $r"
curl -sf "http://127.0.0.1:$port/v1/jobs/$rjob" | grep -q '"state":"running"' || fail "a repeated bind took $rname's instance"
echo "a repeated bind of a bound pod: no-op"

# Jobs finish: delete every bound pod of round 1 (at once: no kubelet) and
# add round 2; the pending ones and round 2's get the freed room.
t1=$(date +%s)
for p in $(bound_names); do api DELETE "/api/v1/namespaces/default/pods/$p?gracePeriodSeconds=0" >/dev/null; done
round 2 30
line=$(settle "round 2")
echo "round 2: $line ($(( $(date +%s) - t1 )) s)"
b2=$(echo "$line" | awk '{print $2}')
[ "$b2" -ge 30 ] || fail "round 2: only $b2 pods bound after the round-1 pods were deleted"
echo "$line" | tr ' ' '\n' | sed -n '6p' | tr ',' '\n' | sort >"$D/places2"
reused=$(comm -12 "$D/places1" "$D/places2" | wc -l)
[ "$reused" -gt 0 ] || fail "no freed placement was reused"
echo "round 2: $reused placements of deleted pods reused"

# A pod that completes (phase Succeeded) frees its instance without a
# delete: one bound 3g pod reports Succeeded; a pending 3g pod gets room.
victim=$(bound_names | grep -- '-3g-' | head -n 1)
[ -n "$victim" ] || fail "no bound 3g pod"
# the waiting pods' retry annotations before: the release must nudge one
retries() { api GET /api/v1/namespaces/default/pods | python3 -c 'import json,sys
for p in json.load(sys.stdin)["items"]:
    a = p["metadata"].get("annotations", {}).get("migsched.io/retry")
    if a is not None and not p["spec"].get("nodeName"): print(p["metadata"]["name"], a.replace(" ", "_"))' | sort; }
retries >"$D/retry0"
api PATCH "/api/v1/namespaces/default/pods/$victim/status" '{"status":{"phase":"Succeeded"}}' \
    application/merge-patch+json >/dev/null
job=$(api GET "/api/v1/namespaces/default/pods/$victim" | python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["annotations"]["migsched.io/job"])')
for i in $(seq 1 100); do
    st=$(curl -sf "http://127.0.0.1:$port/v1/jobs/$job" | python3 -c 'import json,sys; print(json.load(sys.stdin)["state"])')
    [ "$st" = done ] && break
    sleep 0.1
done
[ "$st" = done ] || fail "pod $victim Succeeded but its job $job is $st"
# Room freed outside a filter: kube-scheduler may have retried the waiting
# pods on the status update before our watch freed the instance; migschedd
# nudges the pods that waited longest (migsched.io/retry, "room freed").
for i in $(seq 1 50); do
    retries >"$D/retry1"
    nudged=$(comm -13 "$D/retry0" "$D/retry1" | grep -c 'room_freed' || true)
    [ "$nudged" -gt 0 ] && break
    sleep 0.1
done
[ "$nudged" -gt 0 ] || fail "the completed pod's release nudged no waiting pod (migsched.io/retry)"
echo "completed pod's release: $nudged waiting pod(s) nudged ($(comm -13 "$D/retry0" "$D/retry1" | head -n 1))"
api DELETE "/api/v1/namespaces/default/pods/$victim?gracePeriodSeconds=0" >/dev/null
echo "completed pod's instance freed (job $job done)"

# round 3 on what is left, then everything is deleted: nothing leaks
round 3 15
line=$(settle "round 3")
echo "round 3: $line"
api DELETE "/api/v1/namespaces/default/pods?gracePeriodSeconds=0" >/dev/null
for i in $(seq 1 100); do
    n=$(curl -sf "http://127.0.0.1:$port/v1/jobs?state=running&limit=1000" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["jobs"]))')
    [ "$n" = 0 ] && break
    sleep 0.2
done
[ "$n" = 0 ] || fail "$n jobs still run after every pod was deleted"
total=$(grep -c '"msg":"pod bound"' "$D/migschedd.log" || true)
echo "all pods deleted: no instance left; $total binds in all"
kill "$WPID" 2>/dev/null || true
wait "$WPID" 2>/dev/null || true
WPID=
python3 - "$D/watch.jsonl" "$D/proxy.log" <<'EOF' || fail "the pods' watch or the faulted Bindings (above)"
import json, sys
bound, bad, names = set(), [], set()
for line in open(sys.argv[1]):
    o = json.loads(line)["object"]
    md, spec = o["metadata"], o["spec"]
    ann, node = md.get("annotations") or {}, spec.get("nodeName")
    if spec.get("schedulerName") != "migsched":
        continue
    if node and "migsched.io/job" not in ann:
        bad.append("%s bound to %s without its annotations" % (md["name"], node))
    if not node and "migsched.io/placement" in ann:
        bad.append("%s annotated with %s and not bound" % (md["name"], ann["migsched.io/placement"]))
    if node:
        bound.add(md["uid"])
        names.add("%s/%s" % (md["namespace"], md["name"]))
print("watch: %d pods seen bound; %d writes of a pod bound without its instance or annotated unbound%s"
      % (len(bound), len(bad), "".join("\n  " + b for b in bad[:5])))
faults = [l.split() for l in open(sys.argv[2]) if l.startswith(("lose ", "refuse "))]
unbound = [" ".join(f) for f in faults if f[1] not in names]
print("faults on Bindings: %s; the pods of every one bound: %s" % (" ".join("%s %s" % (f[0], f[1]) for f in faults),
                                                                 "yes" if not unbound else "no, " + ", ".join(unbound)))
# the three rounds bind about 160 distinct pods (a watch that saw few broke)
sys.exit(0 if not bad and len(bound) >= 100 and len(faults) == 4 and not unbound else 1)
EOF
kill -TERM "$MSPID"; wait "$MSPID" || fail "migschedd exited with $? after SIGTERM"
MSPID=
echo "k8s extender e2e: passed in $(( $(date +%s) - t0 )) s"
