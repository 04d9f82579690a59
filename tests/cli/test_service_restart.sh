#!/usr/bin/env bash
# A restart reads the request from the store's columns instead of parsing
# each stored body; a store from before those columns (they are dropped here
# with the sqlite3 shell) is parsed as before. Both restarts of the same
# store give the same jobs, states, placements and label queries.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
command -v jq >/dev/null || { echo "jq missing (scripts/deps/test/service.list)"; exit 1; }
command -v sqlite3 >/dev/null || { echo "sqlite3 missing (scripts/deps/test/service-perf.list)"; exit 1; }

args=(--node a=1xA100-40GB --node b=1xH100-80GB --op-delay 0)
svc_start "$SVC_TMP/log0" --state-dir "$SVC_TMP/s" "${args[@]}"
for i in $(seq 1 40); do
    p=$(( i % 4 == 0 ? 2 : 1 ))g
    team=$(( i % 3 == 0 ? 1 : 2 ))
    body="{\"id\":\"r$i\",\"profile\":\"$p\",\"duration_s\":3600,\"priority\":$(( i % 5 )),"
    body+="\"migratable\":$([ $(( i % 2 )) = 0 ] && echo true || echo false),\"labels\":{\"team\":\"t$team\"}}"
    [ $(( i % 7 )) = 0 ] && body="{\"id\":\"r$i\",\"mem_gb\":15,\"isolation\":\"mig\",\"estimate_s\":60}"
    code=$(curl -s -o /dev/null -w '%{http_code}' -XPOST "$B/v1/jobs" -d "$body")
    [ "$code" = 201 ] || fail "submit r$i: $code"
done
kill -TERM "$SVC_PID"; wait "$SVC_PID" || fail "unclean exit"
[ "$(sqlite3 "$SVC_TMP/s/migschedd.db" 'SELECT COUNT(*) FROM jobs WHERE r_gang >= 1')" = 40 ] ||
    fail "the request columns are not written"

# the store as a migschedd before the request columns and the schema's
# version left it: no columns, no meta table, user_version 0, no sidecar
cp -a "$SVC_TMP/s" "$SVC_TMP/old"
for c in r_profile r_mem_gb r_model r_iso r_gang r_prio r_migr r_dur r_est; do
    sqlite3 "$SVC_TMP/old/migschedd.db" "ALTER TABLE jobs DROP COLUMN $c" || fail "drop $c"
done
sqlite3 "$SVC_TMP/old/migschedd.db" "DROP TABLE meta; PRAGMA user_version=0" || fail "unversion"
rm -f "$SVC_TMP/old/migschedd.acked"

view() {   # what must agree: ids, states, requests, labels, placements; a label query
    curl -s "$B/v1/jobs?limit=1000" |
        jq -c '.jobs[] | {id, state, request, labels, p: (.placement // {} | {node, gpu, start, profile})}'
    curl -s "$B/v1/jobs?label=team=t1&limit=1000" | jq -c '[.jobs[].id]'
}
svc_start "$SVC_TMP/log1" --state-dir "$SVC_TMP/s" "${args[@]}"
view > "$SVC_TMP/new.txt"
kill -TERM "$SVC_PID"; wait "$SVC_PID" || fail "unclean exit (columns)"
svc_start "$SVC_TMP/log2" --state-dir "$SVC_TMP/old" "${args[@]}"
view > "$SVC_TMP/old.txt"
kill -TERM "$SVC_PID"; wait "$SVC_PID" || fail "unclean exit (old store)"
[ "$(grep -c '"id"' "$SVC_TMP/new.txt")" = 40 ] || fail "jobs missing after the restart"
grep -q '"state":"queued"' "$SVC_TMP/new.txt" || fail "no queued job: the test tests nothing"
[ "$(tail -1 "$SVC_TMP/new.txt" | jq length)" -ge 5 ] || fail "the label query found too little"
cmp -s "$SVC_TMP/new.txt" "$SVC_TMP/old.txt" ||
    fail "columns and parsing disagree: $(diff "$SVC_TMP/new.txt" "$SVC_TMP/old.txt" | head)"
# the old store got the columns back (NULL in its rows) and new rows fill them
[ "$(sqlite3 "$SVC_TMP/old/migschedd.db" 'SELECT COUNT(*) FROM jobs WHERE r_gang IS NULL')" = 40 ] ||
    fail "the old store was not given the columns"
[ "$(sqlite3 "$SVC_TMP/old/migschedd.db" 'PRAGMA user_version')" = 2 ] || fail "the old store was not migrated"
echo "test_service_restart: 40 jobs, the same after a restart from columns and from parsed bodies"
