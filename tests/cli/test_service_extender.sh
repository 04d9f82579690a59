#!/usr/bin/env bash
# migschedd's scheduler extender (POST /extender/{filter,prioritize,bind};
# src/service/ext_*.c), without Kubernetes:
#  - the contract: every request kube-scheduler v1.37.2 sent
#    (tests/k8s/contract/*.request.json) gets a 200 whose key names and JSON
#    types (two levels deep) are those of the reply kube-scheduler accepted
#    (*.response.json);
#  - malformed bodies get a 4xx JSON error naming the field;
#  - reservations: concurrent filters for more pods than fit pass exactly as
#    many as fit (they see each other's holds), each bind of a passed pod
#    succeeds, no two instances overlap, and the pods that did not fit get
#    the "no room" reason; a hold that no bind follows expires (TTL) and its
#    room goes to the next pod; a bind on another node than the held one
#    moves the hold; unknown nodes and pods that ask for nothing we serve
#    are FailedAndUnresolvable.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
command -v jq >/dev/null || { echo "jq missing (scripts/deps/test/service.list)"; exit 1; }

C=tests/k8s/contract
D=$SVC_TMP/state
# the contract samples' nodes: node-a..c MIG (A100-40GB, 1 GPU), node-d time-sliced
svc_start "$SVC_TMP/log" --state-dir "$D" --node node-a=1xA100-40GB --node node-b=1xA100-40GB \
    --node node-c=1xA100-40GB --node node-d=1xA100-40GB:timeslice=4 --op-delay 0 --extender-ttl 2

ext() { # ext VERB BODY-FILE -> prints the reply, sets CODE
    CODE=$(curl -s -o "$SVC_TMP/r" -w '%{http_code}' -XPOST -H 'Content-Type: application/json' \
        --data-binary "@$2" "$B/extender/$1") || fail "curl $1"
    cat "$SVC_TMP/r"
}
# Key names and JSON types, two levels deep: an object's members by name,
# an array by its first element; maps of node -> reason are "object" with
# string values.
SHAPE='def vt: if type == "object" then (if ([.[] | type] | unique) - ["string"] == [] then "object"
                                       else "object!" end)
                elif type == "array" then "array" else type end;
       if type == "array" then ["array", (if length > 0 then (.[0] | with_entries(.value |= vt)) else null end)]
       else with_entries(.value |= vt) end'
shape_of() { jq -cS "$SHAPE" "$1"; }

# 1. the contract
n=0
for req in "$C"/*.request.json; do
    name=$(basename "$req" .request.json)
    verb=${name%%-*}
    ext "$verb" "$req" >"$SVC_TMP/got.json"
    [ "$CODE" = 200 ] || fail "$name: HTTP $CODE: $(cat "$SVC_TMP/got.json")"
    want=$(shape_of "$C/$name.response.json")
    got=$(shape_of "$SVC_TMP/got.json")
    if [ "$name" = prioritize ] || [ "$(jq 'type' "$SVC_TMP/got.json")" = '"array"' ]; then
        # an empty HostPriorityList has no element to compare
        [ "$(jq length "$SVC_TMP/got.json")" -gt 0 ] || fail "$name: empty reply"
    fi
    [ "$got" = "$want" ] || fail "$name: shape $got, want $want (reply $(cat "$SVC_TMP/got.json"))"
    n=$((n + 1))
done
[ "$n" -ge 6 ] || fail "only $n contract samples"
echo "contract: $n samples ok"

# 1b. a large cluster (issue 20, defect 4): kube-scheduler (nodeCacheCapable)
# lists every feasible node in the filter's body; 10,000 nodes of 253-character
# names (2.6 MB) must not be refused (413 with the job API's 64 KiB limit), and
# the job API keeps its small limit
jq --argjson n 10000 '.NodeNames += [range($n) | ("n" + (tostring) + "-" + ("x" * 240))[0:253]]' \
    "$C/filter.request.json" >"$SVC_TMP/big-filter.json"
[ "$(stat -c %s "$SVC_TMP/big-filter.json")" -gt 2500000 ] || fail "the large filter body is too small"
ext filter "$SVC_TMP/big-filter.json" >"$SVC_TMP/big-got.json"
[ "$CODE" = 200 ] || fail "a filter listing 10,000 nodes: HTTP $CODE: $(head -c 300 "$SVC_TMP/big-got.json")"
jq -e '.FailedAndUnresolvableNodes | length >= 10000' "$SVC_TMP/big-got.json" >/dev/null ||
    fail "the 10,000 unknown nodes are not unresolvable: $(head -c 300 "$SVC_TMP/big-got.json")"
python3 -c 'import json; print(json.dumps({"profile": "1g.5gb", "labels": {"pad": "x" * 70000}}))' >"$SVC_TMP/big-job.json"
code=$(curl -s -o /dev/null -w '%{http_code}' -XPOST -H 'Content-Type: application/json' \
    --data-binary "@$SVC_TMP/big-job.json" "$B/v1/jobs")
[ "$code" = 413 ] || fail "a 70 KB job body: HTTP $code, want 413"
echo "large filter: 10,000 node names accepted; the job API still refuses 70 KB (413)"

# the filter sample: node-c is not a 1g node in migschedd? It is (A100); the
# time-sliced node-d is unresolvable for a MIG pod, with our reason
ext filter "$C/filter.request.json" >"$SVC_TMP/f.json"
jq -e '.FailedAndUnresolvableNodes["node-d"] | test("time-slices")' "$SVC_TMP/f.json" >/dev/null ||
    fail "time-sliced node not unresolvable for a MIG pod: $(cat "$SVC_TMP/f.json")"

# 2. malformed bodies: 4xx naming the field
bad() { # bad VERB BODY FIELD
    printf '%s' "$2" >"$SVC_TMP/b.json"
    ext "$1" "$SVC_TMP/b.json" >"$SVC_TMP/e.json"
    case "$CODE" in 4??) ;; *) fail "$1 '$2': HTTP $CODE, want 4xx" ;; esac
    jq -e --arg f "$3" '(.error.field // "") == $f and (.error.message | length > 0)' "$SVC_TMP/e.json" >/dev/null ||
        fail "$1 '$2': error $(cat "$SVC_TMP/e.json"), want field '$3'"
}
bad filter 'not json' ''
bad filter '[1]' ''
bad filter '{"NodeNames":["node-a"]}' Pod
bad filter '{"Pod":{"metadata":{"name":"p"}},"NodeNames":["node-a"]}' Pod.metadata.uid
bad filter '{"Pod":{"metadata":{"name":"p","uid":"u1"}},"NodeNames":5}' NodeNames
bad filter '{"Pod":{"metadata":{"name":"p","uid":"u1"}},"NodeNames":null,"Nodes":null}' NodeNames
bad filter '{"Pod":{"metadata":{"name":"p","uid":"u1"}},"NodeNames":[""]}' NodeNames
bad prioritize '{"Pod":{"metadata":{"name":"p","uid":"u1"},"spec":{"containers":{}}},"NodeNames":[]}' Pod.spec.containers
bad bind '{"PodName":"p","PodNamespace":"default","Node":"node-a"}' PodUID
bad bind '{"PodName":"p","PodNamespace":"default","PodUID":7,"Node":"node-a"}' PodUID
bad nosuchverb '{}' ''
code=$(curl -s -o /dev/null -w '%{http_code}' "$B/extender/filter")
[ "$code" = 405 ] || fail "GET /extender/filter: $code, want 405"
echo "malformed bodies: ok"

# a fresh daemon for the properties (the samples' holds are gone with it)
svc_stop
D=$SVC_TMP/state2
svc_start "$SVC_TMP/log2" --state-dir "$D" --node n0=1xA100-40GB --node n1=1xA100-40GB \
    --node n2=1xA100-40GB --node ts=1xA100-40GB:timeslice=2 --node g2=2xA100-40GB --op-delay 0 --extender-ttl 6

pod() { # pod UID RESOURCE=QTY... [--ann K=V] -> ExtenderArgs for n0 n1 n2 ts ghost
    local uid=$1 res='' ann='' r
    shift
    for r in "$@"; do
        case "$r" in
        ann:*) r=${r#ann:}; ann="\"annotations\":{\"${r%%=*}\":\"${r#*=}\"}," ;;
        *) res="$res${res:+,}\"migsched.io/${r%%=*}\":\"${r#*=}\"" ;;
        esac
    done
    printf '{"Pod":{"metadata":{"name":"p-%s","namespace":"default",%s"uid":"%s"},"spec":{"containers":[{"name":"c","resources":{"limits":{%s},"requests":{%s}}}]},"status":{"phase":"Pending"}},"Nodes":null,"NodeNames":["n0","n1","n2","ts","ghost","g2"]}' \
        "$uid" "$ann" "$uid" "$res" "$res"
}
bindargs() { printf '{"PodName":"p-%s","PodNamespace":"default","PodUID":"%s","Node":"%s"}' "$1" "$1" "$2"; }

# 3. 14 concurrent filters for 3g.20gb pods; 5 MIG GPUs hold 2 each: 10 pass
for i in $(seq 1 14); do pod "u$i" mig-3g.20gb=1 >"$SVC_TMP/p$i.json"; done
cpids=()
for i in $(seq 1 14); do
    curl -s -XPOST --data-binary "@$SVC_TMP/p$i.json" "$B/extender/filter" >"$SVC_TMP/f$i.json" &
    cpids+=($!)
done
wait "${cpids[@]}"   # not the daemon
# prioritize at once (before the hold's TTL): the held node scores 10
f=$(grep -l '"NodeNames":\["' "$SVC_TMP"/f[0-9]*.json | head -n 1)
i=${f##*/f}; i=${i%.json}
curl -s -XPOST --data-binary "@$SVC_TMP/p$i.json" "$B/extender/prioritize" >"$SVC_TMP/pr.json"
held=$(curl -s "$B/v1/jobs/k8s-u$i" | jq -r .placement.node)
jq -e --arg h "$held" 'length == 6 and all(.Score >= 0 and .Score <= 10)
      and ([.[] | select(.Score == 10) | .Host] == [$h])' "$SVC_TMP/pr.json" >/dev/null ||
    fail "prioritize: held node $held must be the only 10: $(cat "$SVC_TMP/pr.json")"
pass=0
for i in $(seq 1 14); do
    f=$SVC_TMP/f$i.json
    jq -e '.Error == "" and (.FailedAndUnresolvableNodes.ghost | test("not managed"))
           and (.FailedAndUnresolvableNodes.ts | test("time-slices"))' "$f" >/dev/null ||
        fail "filter $i: $(cat "$f")"
    if [ "$(jq '.NodeNames | length' "$f")" -gt 0 ]; then
        pass=$((pass + 1))
        echo "$i" >>"$SVC_TMP/passed"
    else
        jq -e '[.FailedNodes[]] | length == 4 and all(test("no room"))' "$f" >/dev/null ||
            fail "filter $i: a full node must be a FailedNode with the no-room reason: $(cat "$f")"
    fi
done
[ "$pass" = 10 ] || fail "$pass of 14 concurrent filters passed, want exactly 10 (the room for 3g.20gb)"
# bind each passed pod where kube-scheduler would (the first name)
for i in $(cat "$SVC_TMP/passed"); do
    node=$(jq -r '.NodeNames[0]' "$SVC_TMP/f$i.json")
    bindargs "u$i" "$node" >"$SVC_TMP/b$i.json"
    ext bind "$SVC_TMP/b$i.json" >"$SVC_TMP/br.json"
    [ "$CODE" = 200 ] && [ "$(jq -r .Error "$SVC_TMP/br.json")" = "" ] ||
        fail "bind u$i on $node: $CODE $(cat "$SVC_TMP/br.json")"
done
wait_for sh -c "curl -s '$B/v1/jobs?state=running' | jq -e '.jobs | length == 10' >/dev/null" ||
    fail "10 bound pods are not running: $(curl -s "$B/v1/jobs?state=running")"
wait_for check_cluster || fail "cluster inconsistent after the binds"
echo "concurrent filters: 10 of 14 pass, 10 binds ok, no overlap"
# each verb has its own latency series (a slow bind must not hide in the
# filters' figures)
curl -s "$B/metrics" >"$SVC_TMP/m.txt"
for v in filter prioritize bind; do
    grep -q "^migsched_http_request_duration_seconds_count{method=\"POST\",route=\"/extender/$v\"} [1-9]" "$SVC_TMP/m.txt" ||
        fail "no latency series for /extender/$v: $(grep extender "$SVC_TMP/m.txt" | head -n 5)"
done

# 4. a bind nobody filtered for, a node migschedd lacks
bindargs nobody n0 >"$SVC_TMP/bx.json"
ext bind "$SVC_TMP/bx.json" | jq -e '.Error | test("no filter call")' >/dev/null || fail "unfiltered bind"

# 5. holds expire: free one GPU (cancel the two 3g jobs on n0), hold a 7g
#    there and let it lapse
for j in $(curl -s "$B/v1/jobs?state=running" | jq -r '.jobs[] | select(.placement.node == "n0") | .id'); do
    curl -sf -XDELETE "$B/v1/jobs/$j" >/dev/null
done
wait_for sh -c "curl -s '$B/v1/jobs?state=running' | jq -e '.jobs | length == 8' >/dev/null" || fail "cancel"
pod big1 mig-7g.40gb=1 >"$SVC_TMP/big1.json"
pod big2 mig-7g.40gb=1 >"$SVC_TMP/big2.json"
ext filter "$SVC_TMP/big1.json" | jq -e '.NodeNames | length == 1' >/dev/null || fail "7g big1 must fit one node"
ext filter "$SVC_TMP/big2.json" | jq -e '.NodeNames == []' >/dev/null || fail "big1's hold must keep big2 out"
sleep 6.5
ext filter "$SVC_TMP/big2.json" | jq -e '.NodeNames | length == 1' >/dev/null ||
    fail "big1's hold did not expire after --extender-ttl 6"
curl -s "$B/v1/jobs/k8s-big1" | jq -e '.state == "cancelled"' >/dev/null || fail "expired hold not cancelled"
echo "holds: expire after the TTL"

# 6. pods we cannot serve: unresolvable everywhere, with the reason
pod two mig-1g.5gb=1 gpu-share=1 >"$SVC_TMP/two.json"
ext filter "$SVC_TMP/two.json" | jq -e '.NodeNames == [] and ([.FailedAndUnresolvableNodes[]] | length == 6
    and all(test("one of")))' >/dev/null || fail "two kinds of resource: $(cat "$SVC_TMP/r")"
pod frac mig-1g.5gb=0.5 >"$SVC_TMP/frac.json"
ext filter "$SVC_TMP/frac.json" | jq -e '[.FailedAndUnresolvableNodes[]] | all(test("whole number"))' >/dev/null ||
    fail "fractional quantity: $(cat "$SVC_TMP/r")"
pod nop mig-7g.99gb=1 >"$SVC_TMP/nop.json"
ext filter "$SVC_TMP/nop.json" | jq -e '.NodeNames == [] and (.FailedAndUnresolvableNodes.n0 | test("memory"))' \
    >/dev/null || fail "profile larger than the GPU: $(cat "$SVC_TMP/r")"
# a time-sliced share goes to the time-sliced node only
pod sh1 gpu-share=1 >"$SVC_TMP/sh1.json"
ext filter "$SVC_TMP/sh1.json" | jq -e '.NodeNames == ["ts"] and (.FailedAndUnresolvableNodes.n0 | test("time-slice"))' \
    >/dev/null || fail "gpu-share: $(cat "$SVC_TMP/r")"
bindargs sh1 ts >"$SVC_TMP/bsh1.json"
ext bind "$SVC_TMP/bsh1.json" | jq -e '.Error == ""' >/dev/null || fail "bind gpu-share: $(cat "$SVC_TMP/r")"
echo "unservable pods: unresolvable with reasons"
# a gang of 2 whole GPUs (mig-7g.40gb: 2, or the migsched.io/gang
# annotation): only g2 has 2 GPUs, and they are busy; all or nothing
pod gang mig-7g.40gb=2 >"$SVC_TMP/gang.json"
ext filter "$SVC_TMP/gang.json" | jq -e '.NodeNames == [] and (.FailedAndUnresolvableNodes.n0 | test("fewer GPUs"))
    and (.FailedNodes.g2 | test("not enough free GPUs"))' >/dev/null || fail "gang on a busy cluster: $(cat "$SVC_TMP/r")"
for j in $(curl -s "$B/v1/jobs?state=running" | jq -r '.jobs[] | select(.placement.node == "g2") | .id' | head -n 3); do
    curl -sf -XDELETE "$B/v1/jobs/$j" >/dev/null   # one 3g job stays on g2
done
wait_for sh -c "curl -s '$B/v1/jobs?state=running' | jq -e '[.jobs[] | select(.placement.node == \"g2\")] | length == 1' >/dev/null" ||
    fail "cancel on g2"
ext filter "$SVC_TMP/gang.json" | jq -e '.NodeNames == []' >/dev/null || fail "a gang must not take a half-free node"
j=$(curl -s "$B/v1/jobs?state=running" | jq -r '.jobs[] | select(.placement.node == "g2") | .id')
curl -sf -XDELETE "$B/v1/jobs/$j" >/dev/null
wait_for sh -c "curl -s '$B/v1/jobs?state=running' | jq -e '[.jobs[] | select(.placement.node == \"g2\")] | length == 0' >/dev/null" ||
    fail "cancel on g2"
ext filter "$SVC_TMP/gang.json" | jq -e '.NodeNames == ["g2"]' >/dev/null || fail "gang on an empty g2: $(cat "$SVC_TMP/r")"
bindargs gang g2 >"$SVC_TMP/bgang.json"
ext bind "$SVC_TMP/bgang.json" | jq -e '.Error == ""' >/dev/null || fail "bind gang: $(cat "$SVC_TMP/r")"
wait_for sh -c "curl -s '$B/v1/jobs/k8s-gang' | jq -e '.state == \"running\" and .placement.gpus == 2' >/dev/null" ||
    fail "gang not running on 2 GPUs: $(curl -s "$B/v1/jobs/k8s-gang")"
echo "gang: all or nothing, 2 whole GPUs on one node"
wait_for check_cluster || fail "cluster inconsistent at the end"
svc_stop

# 7. the load bench runs (figures in docs/performance.md; no time is checked)
bench=$(dirname "$MIGSCHEDD")/bench_extender
if [ -x "$bench" ]; then
    "$bench" --nodes 20 --pods 30 >"$SVC_TMP/bench.txt" || fail "bench_extender failed"
    grep -q 'per pod *p50 .* p99 ' "$SVC_TMP/bench.txt" || fail "bench_extender: $(cat "$SVC_TMP/bench.txt")"
    grep -q '30 pods (30 bound' "$SVC_TMP/bench.txt" || fail "bench_extender bound too few: $(cat "$SVC_TMP/bench.txt")"
fi
echo "extender: ok"
