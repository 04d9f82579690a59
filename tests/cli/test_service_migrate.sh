#!/usr/bin/env bash
# Migration for real: migschedd runs --migrate-hook for every move with the
# job and both instances' UUIDs; a hook that succeeds moves the job
# (make-before-break), one that fails or overruns --migrate-timeout rolls
# the move back: the job keeps running on its source instance and no
# instance is left over.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh

scenario() { # submit five 1g jobs on one A100, end two: fa compacts the rest
    local j
    for j in a b c d e; do
        curl -sf -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" \
            -d "{\"id\":\"$j\",\"profile\":\"1g\",\"migratable\":true}" || fail "submit $j"
    done
    wait_for sh -c "curl -s $B/v1/jobs?state=running | jq -e '.jobs | length == 5' >/dev/null" \
        || fail "5 jobs never run"
    curl -sf -o /dev/null -XPOST "$B/v1/jobs/b/done" || fail "b done"
}
migrations() { # RESULT
    curl -s "$B/metrics" | awk -v r="$1" -F'[ ]' '/^migsched_migrations_total/ && $1 ~ "result=\"" r "\"" { n += $2 } END { print n + 0 }'
}

# 1. a hook that works: the job moves, the hook saw both UUIDs
HOOK="echo \"\$MIGSCHED_JOB \$MIGSCHED_MOVE \$MIGSCHED_FROM_UUID \$MIGSCHED_TO_UUID\" >> $SVC_TMP/hook.log"
svc_start "$SVC_TMP/log1" --state-dir "$SVC_TMP/s1" --backend sim --node a=1xA100-40GB --policy fa \
    --migrate-hook "$HOOK"
scenario
wait_for sh -c "[ \$(curl -s $B/metrics | grep -c 'result=\"success\"} [1-9]') -ge 1 ]" || fail "no migration"
wait_for check_cluster || fail "view and hardware differ after a move"
grep -Eq '^[a-e] make-before-break MIG-[^ ]+ MIG-[^ ]+$' "$SVC_TMP/hook.log" || fail "hook log: $(cat "$SVC_TMP/hook.log")"
[ "$(migrations failed)" -eq 0 ] || fail "a working hook failed a move"
svc_stop

# 2. a hook that fails, and 3. one that overruns its deadline: rolled back
for h in "exit 3" "sleep 5"; do
    svc_start "$SVC_TMP/log2" --state-dir "$SVC_TMP/s-$RANDOM" --backend sim --node a=1xA100-40GB \
        --policy fa --migrate-hook "$h" --migrate-timeout 1
    scenario
    wait_for sh -c "[ \$(curl -s $B/metrics | grep -c 'result=\"failed\"} [1-9]') -ge 1 ]" \
        || wait_for sh -c "[ \$(curl -s $B/metrics | grep -c 'result=\"failed\"} [1-9]') -ge 1 ]" \
        || fail "hook '$h': no failed migration"
    [ "$(migrations success)" -eq 0 ] || fail "hook '$h': a move succeeded"
    wait_for check_cluster || fail "hook '$h': view and hardware differ after a rollback"
    n=$(curl -s "$B/v1/jobs?state=running" | jq '.jobs | length')
    [ "$n" -eq 4 ] || fail "hook '$h': $n jobs running, want 4 (nothing lost)"
    inst=$(curl -s "$B/v1/cluster" | jq '[.nodes[].gpus[].instances[]] | length')
    [ "$inst" -eq 4 ] || fail "hook '$h': $inst instances for 4 jobs (a target left over)"
    svc_stop
done
echo "test_service_migrate: ok"
