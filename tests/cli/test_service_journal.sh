#!/usr/bin/env bash
# The sim backend's inventory: a snapshot (sim-inventory.json) and a journal
# (sim-inventory.journal) of one line per op holding the new state of the
# op's GPUs (src/backend/inv_file.c).
#   1. after kill -9 the restarted daemon rebuilds the inventory from the
#      snapshot and the journal: every running job is adopted on the
#      instance it had (same uuid), nothing is re-created;
#   2. a journal line cut short by a crash (no newline) is ignored;
#   3. a corrupt complete line is refused at start, naming the file and line;
#   4. a clean stop leaves everything in the snapshot and an empty journal;
#   5. under a stream of ops the journal stays bounded (the snapshot is
#      rewritten once the journal outgrows it), and no sim job of the
#      stream ends before its duration.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
D=$SVC_TMP/state
INV=$D/sim-inventory.json
JNL=$D/sim-inventory.journal
ARGS=(--state-dir "$D" --node a=2xA100-40GB --op-delay 0)
uuids() { curl -s "$B/v1/jobs?state=running" | jq -r '[.jobs[] | "\(.id)=\(.placement.instance_uuid)"] | sort | join(" ")'; }
size() { stat -c %s "$1"; }

# 1. kill -9 with the ops only in the journal
svc_start "$SVC_TMP/log" "${ARGS[@]}"
for i in 1 2 3; do
    curl -sf -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" -d "{\"id\":\"j$i\",\"profile\":\"2g.10gb\"}" \
        || fail "submit j$i"
done
wait_for sh -c "[ \"\$(curl -s '$B/v1/jobs?state=running' | jq '.jobs | length')\" = 3 ]" || fail "the jobs never run"
wait_for check_cluster || fail "not in sync before the crash"
before=$(uuids)
[ "$(size "$JNL")" -gt 0 ] || fail "the ops were not journalled"
[ "$(jq '.instances | length' "$INV")" = 0 ] || fail "the snapshot is not the state at start: $(cat "$INV")"
kill -9 "$SVC_PID"; wait "$SVC_PID" 2>/dev/null
svc_start "$SVC_TMP/log" "${ARGS[@]}"
wait_for check_cluster || fail "case 1: not in sync after the restart"
[ "$(uuids)" = "$before" ] || fail "case 1: the jobs moved or were placed anew: $(uuids), was $before"
grep -q '"adopted":3' "$SVC_TMP/log" || fail "case 1: not adopted: $(grep started "$SVC_TMP/log" | tail -1)"

# 2. a torn last line
kill -9 "$SVC_PID"; wait "$SVC_PID" 2>/dev/null
printf '{"uuid_seq":99,"gpus":[0],"instances":[' >> "$JNL"
svc_start "$SVC_TMP/log" "${ARGS[@]}"
wait_for check_cluster || fail "case 2: not in sync after a torn line"
[ "$(uuids)" = "$before" ] || fail "case 2: the torn line changed the inventory: $(uuids)"

# 3. a corrupt line: the daemon refuses to start and says where
kill -9 "$SVC_PID"; wait "$SVC_PID" 2>/dev/null
printf 'not json\n' >> "$JNL"
lines=$(wc -l < "$JNL")
"$MIGSCHEDD" --listen 127.0.0.1:1 "${ARGS[@]}" 2>"$SVC_TMP/bad.err" && fail "case 3: a corrupt journal was accepted"
grep -q "sim-inventory.journal line $lines" "$SVC_TMP/bad.err" || fail "case 3: the error does not name the line: $(cat "$SVC_TMP/bad.err")"
sed -i '$d' "$JNL"

# 4. a clean stop: the snapshot holds everything, the journal is empty
svc_start "$SVC_TMP/log" "${ARGS[@]}"
wait_for check_cluster || fail "case 4: not in sync"
svc_stop
[ "$(size "$JNL")" = 0 ] || fail "case 4: the journal was not emptied: $(cat "$JNL")"
jq -e '[.instances[] | select(.job != "")] | length == 3' "$INV" >/dev/null || fail "case 4: snapshot: $(cat "$INV")"

# 5. a stream of short jobs: the journal is compacted as it grows
svc_start "$SVC_TMP/log" "${ARGS[@]}" --time-scale 1000
for i in $(seq 1 150); do
    printf '{"id":"s%d","profile":"1g.5gb","duration_s":5}\n' "$i"
done | while read -r body; do
    curl -sf -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" -d "$body" || echo "submit failed: $body"
done | grep . && fail "case 5: a submission failed"
wait_for sh -c "[ \"\$(curl -s '$B/v1/jobs?state=done&limit=500' | jq '.jobs | length')\" = 150 ]" || fail "case 5: not all done"
wait_for check_cluster || fail "case 5: not in sync"
# and no sim job ended before its duration (5 s at --time-scale 1000: 5 ms)
curl -s "$B/v1/jobs?state=done&limit=500" | jq -e '[.jobs[] | .ended_at - .started_at] | min >= 0.005 - 1e-6' >/dev/null \
    || fail "case 5: a job ended early: $(curl -s "$B/v1/jobs?state=done&limit=500" | jq -c '[.jobs[] | .ended_at - .started_at] | min')"
j=$(size "$JNL"); s=$(size "$INV")
[ "$j" -le $((4 * s + 65536 + 8192)) ] || fail "case 5: the journal ($j bytes) outgrew its bound (snapshot $s bytes)"
svc_stop
echo "test_service_journal: ok"
