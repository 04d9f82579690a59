#!/usr/bin/env bash
# The restart rule, case by case, on hand-made hardware states (the sim's
# inventory file edited while the daemon is down; after a clean stop the
# file holds everything and its journal is empty), as a crash in the middle
# of a make-before-break migration leaves them:
#   1. target GI created, job not moved yet  -> rolled back: the job stays on
#      its source, the new idle GI is kept as an idle GI of the view (nothing
#      is destroyed at start-up for being idle; the policy may reuse it);
#   2. job moved, old GI not destroyed yet   -> finished: the job runs on the
#      target, the old GI is an idle GI of the view;
#   3. an instance of a job the store does not know -> start-up refuses,
#      naming it, and changes nothing; with --recovery adopt it becomes a
#      running job of its own (docs/operations.md);
#   4. a running job whose instance vanished -> queued again and placed
#      (and a daemon whose port is taken exits before it reconciles).
# After each restart the backend holds exactly the scheduler's view.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
D=$SVC_TMP/state
INV=$D/sim-inventory.json
ARGS=(--state-dir "$D" --node a=2xA100-40GB --op-delay 0)
place() { curl -s "$B/v1/jobs/$1" | jq -c '[.state, .placement.gpu_uuid, .placement.start]'; }

svc_start "$SVC_TMP/log" "${ARGS[@]}"
curl -sf -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" -d '{"id":"m1","profile":"3g.20gb","migratable":true}'
wait_for sh -c "curl -s $B/v1/jobs/m1 | jq -e '.state == \"running\"' >/dev/null" || fail "m1 never runs"
before=$(place m1)
svc_stop
src=$(jq -c '.instances[] | select(.job == "m1")' "$INV")
sgpu=$(echo "$src" | jq .gpu); tgpu=$((1 - sgpu))
prof=$(echo "$src" | jq .prof)

# 1. the target exists (idle), the job has not moved
jq ".instances += [{\"gpu\": $tgpu, \"start\": 0, \"prof\": $prof, \"job\": \"\", \"uuid\": \"MIG-target\"}]" "$INV" > "$INV.new" && mv "$INV.new" "$INV"
svc_start "$SVC_TMP/log" "${ARGS[@]}"
[ "$(place m1)" = "$before" ] || fail "case 1: m1 moved: $(place m1), was $before"
wait_for check_cluster || fail "case 1: not in sync"
svc_stop   # a clean stop leaves the whole inventory in the file (no journal)
jq -e '[.instances[] | select(.uuid == "MIG-target" and .job == "")] | length == 1' "$INV" >/dev/null ||
    fail "case 1: the idle target was not kept: $(cat "$INV")"
jq '.instances |= map(select(.uuid != "MIG-target"))' "$INV" > "$INV.new" && mv "$INV.new" "$INV"

# 2. the job moved to the target; the source is idle
jq ".instances |= map(.job = \"\") | .instances += [{\"gpu\": $tgpu, \"start\": 0, \"prof\": $prof, \"job\": \"m1\", \"uuid\": \"MIG-moved\"}]" \
    "$INV" > "$INV.new" && mv "$INV.new" "$INV"
svc_start "$SVC_TMP/log" "${ARGS[@]}"
curl -s "$B/v1/jobs/m1" | jq -e ".state == \"running\" and .placement.gpu == $tgpu and .placement.start == 0 and .placement.instance_uuid == \"MIG-moved\"" \
    >/dev/null || fail "case 2: m1 is not on the target: $(curl -s "$B/v1/jobs/m1")"
wait_for check_cluster || fail "case 2: not in sync"
svc_stop
jq -e '[.instances[] | select(.job == "")] | length == 1' "$INV" >/dev/null ||
    fail "case 2: the idle source was not kept: $(cat "$INV")"
jq '.instances |= map(select(.job != ""))' "$INV" > "$INV.new" && mv "$INV.new" "$INV"

# 3. an instance nobody knows
jq ".instances += [{\"gpu\": $sgpu, \"start\": 4, \"prof\": $prof, \"job\": \"ghost\", \"uuid\": \"MIG-ghost\"}]" "$INV" > "$INV.new" && mv "$INV.new" "$INV"
cp "$INV" "$SVC_TMP/inv3"
"$MIGSCHEDD" --listen 127.0.0.1:$(free_port) "${ARGS[@]}" 2>"$SVC_TMP/e3" && fail "case 3: started with an unknown job's instance"
grep -q 'start-up refused: .*job ghost' "$SVC_TMP/e3" || fail "case 3: no reason: $(tail -n 3 "$SVC_TMP/e3")"
[ "$(jq -Sc '.instances | sort_by(.gpu, .start)' "$INV")" = "$(jq -Sc '.instances | sort_by(.gpu, .start)' "$SVC_TMP/inv3")" ] ||
    fail "case 3: the refusal changed the hardware: $(cat "$INV")"
svc_start "$SVC_TMP/log" "${ARGS[@]}" --recovery adopt
curl -s "$B/v1/jobs/ghost" | jq -e '.state == "running" and .labels["migsched.io/recovered"] == "true"' >/dev/null ||
    fail "case 3: the ghost was not adopted: $(curl -s "$B/v1/jobs/ghost")"
wait_for check_cluster || fail "case 3: not in sync"
curl -sf -o /dev/null -XDELETE "$B/v1/jobs/ghost" || fail "case 3: cancel the ghost"
wait_for sh -c "jq -e '[.instances[] | select(.job == \"ghost\")] | length == 0' '$INV' >/dev/null || curl -s '$B/v1/cluster' | jq -e '[.nodes[].gpus[].instances[] | select(.job == \"ghost\")] | length == 0' >/dev/null" ||
    fail "case 3: the cancelled ghost still runs"
svc_stop
jq -e '[.instances[] | select(.job == "ghost")] | length == 0' "$INV" >/dev/null || fail "case 3: the ghost survived its cancel"
jq '.instances |= map(select(.job != ""))' "$INV" > "$INV.new" && mv "$INV.new" "$INV"

# 4. m1's instance is gone: it is queued again and placed anew
jq '.instances = []' "$INV" > "$INV.new" && mv "$INV.new" "$INV"
# (first a daemon whose port is taken: it must exit before it reconciles,
# or it would requeue m1 and leave this run nothing to show)
python3 -c 'import socket, time; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
print(s.getsockname()[1], flush=True); time.sleep(60)' > "$SVC_TMP/port" &
holder=$!
wait_for test -s "$SVC_TMP/port" || fail "no port holder"
"$MIGSCHEDD" --listen "127.0.0.1:$(cat "$SVC_TMP/port")" "${ARGS[@]}" 2>"$SVC_TMP/taken.err" && fail "started on a taken port"
kill "$holder"; wait "$holder" 2>/dev/null
grep -q '"msg":"cannot listen"' "$SVC_TMP/taken.err" || fail "a taken port: $(cat "$SVC_TMP/taken.err")"
grep -q '"msg":"started"' "$SVC_TMP/taken.err" && fail "it reconciled before it found its port taken"
svc_start "$SVC_TMP/log" "${ARGS[@]}"
wait_for sh -c "curl -s $B/v1/jobs/m1 | jq -e '.state == \"running\" and .placement.instance_uuid != \"MIG-moved\"' >/dev/null" \
    || fail "case 4: m1 not placed again: $(curl -s "$B/v1/jobs/m1")"
curl -s "$B/v1/events?since=0&timeout=0" | jq -e '[.events[] | select(.job == "m1") | .state] | index("queued") != null' >/dev/null \
    || fail "case 4: no queued event for m1"
wait_for check_cluster || fail "case 4: not in sync"
svc_stop
echo "test_service_reconcile: ok"
