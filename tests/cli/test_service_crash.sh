#!/usr/bin/env bash
# migschedd survives kill -9 at random moments: concurrent submissions
# (bounded curl loops), SIGKILL, restart on the same state directory, and then
#   - every job that was acknowledged (201, or 200 for a repeat) is there;
#   - no two instances share a memory slice, and the backend's inventory is
#     exactly the scheduler's view (nothing leaked, nothing lost);
#   - the daemon carries on: every job eventually finishes.
# Half the rounds run with a long --commit-delay, so that a kill often finds
# batches handled and held for their commit.
# Then op failures injected by the sim (every 3rd create fails) are rolled
# back and retried without leaking instances.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
command -v jq >/dev/null || { echo "jq missing (scripts/deps/test/service.list)"; exit 1; }

D=$SVC_TMP/state
ARGS=(--state-dir "$D" --node a=4xA100-40GB --node b=2xH100-80GB --node c=2xA100-40GB:timeslice=4
      --time-scale 40 --op-delay 0.002)
PROFILES=(1g 2g 3g 4g 1g.5gb 2g.10gb)
ROUNDS=${CRASH_ROUNDS:-4}
WORKERS=8
PER_WORKER=12

submitter() {   # round worker: submits PER_WORKER jobs, logs "id code"
    local r=$1 w=$2 i id p dur code
    for i in $(seq 1 $PER_WORKER); do
        id="r$r-w$w-$i"
        p=${PROFILES[$(( (r * 7 + w * 3 + i) % ${#PROFILES[@]} ))]}
        dur=$(( (r + w + i) % 20 + 1 ))
        code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 -XPOST -H 'Content-Type: application/json' \
               "$B/v1/jobs" -d "{\"id\":\"$id\",\"profile\":\"$p\",\"duration_s\":$dur,\"migratable\":true}") || code=000
        echo "$id $code" >> "$SVC_TMP/acks"
        [ "$code" = 000 ] && return 0
    done
}

: > "$SVC_TMP/acks"
for r in $(seq 1 "$ROUNDS"); do
    # even rounds hold each commit for 20 ms (--commit-delay): kills land
    # while handled batches wait for their commit
    hold=(); [ $((r % 2)) = 0 ] && hold=(--commit-delay 20)
    svc_start "$SVC_TMP/log" "${ARGS[@]}" "${hold[@]}"
    pids=()
    for w in $(seq 1 $WORKERS); do submitter "$r" "$w" & pids+=($!); done
    sleep "0.$(( RANDOM % 9 + 1 ))"
    kill -9 "$SVC_PID"
    wait "$SVC_PID" 2>/dev/null
    for p in "${pids[@]}"; do wait "$p"; done
    echo "round $r: killed; $(grep -cE ' 20[01]$' "$SVC_TMP/acks") acknowledged so far"
done

svc_start "$SVC_TMP/log" "${ARGS[@]}"
grep -q '"msg":"started"' "$SVC_TMP/log" || fail "no start-up record"
# every acknowledged job is there
missing=0
while read -r id code; do
    case "$code" in 200|201) ;; *) continue;; esac
    got=$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/jobs/$id")
    [ "$got" = 200 ] || { echo "acknowledged job $id: GET gave $got"; missing=$((missing + 1)); }
done < "$SVC_TMP/acks"
[ "$missing" = 0 ] || fail "$missing acknowledged jobs lost"
acked=$(grep -cE ' 20[01]$' "$SVC_TMP/acks")
[ "$acked" -gt 0 ] || fail "no submission was acknowledged: the test tested nothing"
# consistent now (once pending ops settle), and everything finishes
wait_for check_cluster || fail "backend and view differ after restart: $(curl -s $B/v1/cluster | jq -c .backend)"
done_all() {
    curl -s "$B/metrics" | awk '/^migsched_jobs\{state="(queued|starting|running|migrating)"\}/ { n += $2 } END { exit n != 0 }'
}
for i in $(seq 1 6); do wait_for done_all && break; done
done_all || fail "jobs still unfinished: $(curl -s $B/metrics | grep '^migsched_jobs')"
check_cluster || fail "not in sync at the end"
[ "$(curl -s $B/v1/cluster | jq '[.nodes[].gpus[].instances[] | select(.job != null)] | length')" = 0 ] \
    || fail "instances still run jobs at the end"
grep -c '"reconcile: destroying' "$SVC_TMP/log" | sed 's/^/instances destroyed by reconciliation: /'
svc_stop
echo "crash: $acked acknowledged jobs over $ROUNDS kills, all present and finished"

# injected op failures: rolled back, retried, nothing leaks
D2=$SVC_TMP/state2
svc_start "$SVC_TMP/log2" --state-dir "$D2" --node a=2xA100-40GB --sim-fail create:3 --op-delay 0 --time-scale 20
for i in $(seq 1 12); do
    curl -s -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" \
        -d "{\"id\":\"f$i\",\"profile\":\"${PROFILES[$((i % 4))]}\",\"duration_s\":2}"
done
for i in $(seq 1 6); do wait_for done_all && break; done
done_all || fail "with injected failures, jobs never finish"
# a job is done before its instance's DESTROY has run, and a GPU whose
# create failed backs off before its next op: in sync once they settle
wait_for check_cluster || fail "with injected failures, backend and view differ: $(curl -s $B/v1/cluster | jq -c .backend)"
curl -s "$B/metrics" | grep -q '^migsched_plan_ops_total{op="create",result="failed"} [1-9]' || fail "no create failed"
svc_stop
echo "test_service_crash: ok"
