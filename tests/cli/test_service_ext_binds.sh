#!/usr/bin/env bash
# Binds never delay filters (issue 25, item 3): in --kube mode a bind waits
# (up to 8 s) for its instance before it touches the API server. Here the
# sim backend's ops take 6 s each (--op-delay 6), so 16 binds all wait for
# their instances at once; a filter and a prioritize sent while they wait
# must be answered before any of the 16 binds is (ordering, not time: with
# the two shared worker threads of before, the filter queued behind the
# binds and came back after them). The API server is a loopback port
# nobody listens on: the binds only reach it after their wait, and then
# fail and roll back, which this test does not look at.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
command -v jq >/dev/null || { echo "test_service_ext_binds: skipped (no jq)"; exit 77; }

svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/d" --node a=4xA100-40GB --node b=4xA100-40GB \
    --op-delay 6 --extender-ttl 60 --kube-api "http://127.0.0.1:$(free_port)"

args() { # args UID NODE -> ExtenderArgs for a 1g.5gb pod over node NODE
    printf '{"Pod":{"metadata":{"name":"p-%s","namespace":"default","uid":"%s"},"spec":{"containers":[{"name":"c","resources":{"requests":{"migsched.io/mig-1g.5gb":"1"}}}]}},"NodeNames":["%s"]}' "$1" "$1" "$2"
}
ext() { # ext VERB BODY -> the reply on stdout
    curl -sf --max-time 60 -XPOST -H 'Content-Type: application/json' --data-binary "$2" "$B/extender/$1"
}
msgs() { curl -sf "$B/metrics" | sed -n 's/^migsched_loop_messages_total //p'; }
N=16
for i in $(seq 1 $N); do
    node=$([ $i -le 8 ] && echo a || echo b)
    r=$(ext filter "$(args u$i $node)") || fail "filter u$i"
    echo "$r" | jq -e --arg n $node '.NodeNames == [$n]' >/dev/null || fail "filter u$i did not pass node $node: $r"
    echo "$node" > "$SVC_TMP/node$i"
done
# the 16 binds, at once; each writes its reply when it comes
m0=$(msgs)
BIND_PIDS=()
for i in $(seq 1 $N); do
    ( ext bind "{\"PodName\":\"p-u$i\",\"PodNamespace\":\"default\",\"PodUID\":\"u$i\",\"Node\":\"$(cat "$SVC_TMP/node$i")\"}" \
          > "$SVC_TMP/bind$i.tmp"; mv "$SVC_TMP/bind$i.tmp" "$SVC_TMP/bind$i" ) &
    BIND_PIDS+=($!)
done
# wait until every bind is inside the daemon: each has made its pod's job
# start (the hold became a start; its instance takes 12 s, two ops)
started() {
    [ "$(curl -sf "$B/v1/jobs" | jq '[.jobs[] | select(.state == "starting")] | length')" = $N ]
}
all_in=1
wait_for started || all_in=0   # (two shared threads let only two binds in)
done_binds() { ls "$SVC_TMP" | grep -c "^bind[0-9]*$"; }
r=$(ext filter "$(args u99 a)") || fail "filter u99 while binds wait"
echo "$r" | jq -e '.Error == ""' >/dev/null || fail "filter u99: $r"
p=$(ext prioritize "$(args u99 a)") || fail "prioritize u99 while binds wait"
echo "$p" | jq -e 'length == 1' >/dev/null || fail "prioritize u99: $p"
nb=$(done_binds)
[ "$nb" = 0 ] || fail "the filter and prioritize came back after $nb of the $N binds: they waited behind them"
[ $all_in = 1 ] || fail "the $N binds did not all wait at once: $(curl -s "$B/v1/jobs" | jq -c '[.jobs[].state]')"
echo "filter and prioritize answered while all $N binds waited for their instances"
wait "${BIND_PIDS[@]}"
[ "$(done_binds)" = $N ] || fail "not every bind answered"
# each bind asked the loop for its job's state when the loop said a job
# left STARTING (ext_runs.c), at most once a second otherwise: over the 8 s
# the 16 waited (BIND_WAIT_S; their instances take 12 s), about 200
# messages in all (the binds, the ops and their outcomes, the rollbacks,
# the reads above); a nap of at most 50 ms between questions made it
# about 2,700
m1=$(msgs)
[ $((m1 - m0)) -lt 1000 ] || fail "the loop handled $((m1 - m0)) messages while $N binds waited 8 s"
echo "$N binds waited 8 s for their instances: $((m1 - m0)) loop messages"
svc_stop
echo "test_service_ext_binds: ok"
