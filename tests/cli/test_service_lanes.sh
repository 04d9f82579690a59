#!/usr/bin/env bash
# migschedd's executor lanes against real agents (issue 20, defect 7: one
# hung agent stalled every node's ops; a job for a healthy node waited
# 75 s). Two migsched-agent processes (sim backend), migschedd --backend
# agent; agent a is stopped (SIGSTOP: its socket still accepts, nothing
# answers) while an op of its node is in flight. A job for node b must run
# while a's op hangs (its deadline, --op-timeout, is 120 s; the one-thread
# executor waited 60 s a request, sent twice). Once a answers again, its
# job runs too and the view and both agents agree.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
AGENT=${MIGSCHED_AGENT:-$(dirname "$MIGSCHEDD")/migsched-agent}
[ -x "$AGENT" ] || fail "no agent at $AGENT (make all builds it)"
command -v jq >/dev/null || { echo "test_service_lanes: skipped (no jq)"; exit 77; }

agent_start() { # LOG ARGS... -> AG_PID, A
    local log=$1 try i port; shift
    for try in 1 2 3 4 5 6 7 8; do
        port=$(free_port)
        "$AGENT" --listen 127.0.0.1:$port "$@" 2>>"$log" &
        AG_PID=$!
        SVC_PIDS+=("$AG_PID")
        A=http://127.0.0.1:$port
        for i in $(seq 1 200); do
            curl -sf -o /dev/null "$A/healthz" && return 0
            kill -0 "$AG_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill -0 "$AG_PID" 2>/dev/null && fail "the agent did not come up"
        wait "$AG_PID" 2>/dev/null
        grep -q '"cannot listen"' "$log" || fail "the agent exited at start-up: $(tail -3 "$log")"
    done
    fail "no free port"
}
state_of() { curl -s --max-time 5 "$B/v1/jobs/$1" | jq -r .state; }

agent_start "$SVC_TMP/a.log" --backend sim --node-spec 1xA100-40GB --node-name a --state-dir "$SVC_TMP/sa" \
    --cdi-dir "$SVC_TMP/ca"
AA=$A; PA=$AG_PID
agent_start "$SVC_TMP/b.log" --backend sim --node-spec 1xH100-80GB --node-name b --state-dir "$SVC_TMP/sb" \
    --cdi-dir "$SVC_TMP/cb"
AB=$A; PB=$AG_PID
svc_start "$SVC_TMP/d.log" --state-dir "$SVC_TMP/d" --backend agent --node a=1xA100-40GB --node b=1xH100-80GB \
    --agent "a=$AA" --agent "b=$AB" --policy best-fit --op-timeout 120

kill -STOP "$PA"   # a hangs: connections are accepted, nothing answers
post() { curl -sf -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" -d "$1" || fail "submit $1"; }
post '{"id":"ja","profile":"7g.40gb"}'   # only node a has an A100-40GB
post '{"id":"jb","profile":"7g.80gb"}'   # only node b has an H100-80GB
ok=0
end=$((SECONDS + 30))   # 30 s at most, half of what one request to a took
while [ $SECONDS -lt $end ]; do
    [ "$(state_of jb)" = running ] && { ok=1; break; }
    sleep 0.05
done
[ $ok = 1 ] || { kill -CONT "$PA"; fail "jb (node b) waited behind the hung agent a: $(curl -s "$B/v1/jobs")"; }
[ "$(state_of ja)" != running ] || fail "ja runs although its agent is stopped"
echo "jb ran on node b while node a's agent hung (ja: $(state_of ja))"
kill -CONT "$PA"
wait_for sh -c "[ \"\$(curl -s '$B/v1/jobs/ja' | jq -r .state)\" = running ]" || fail "ja never ran once a answered"
wait_for check_cluster || fail "view and agents differ: $(curl -s "$B/v1/cluster")"
svc_stop
kill -TERM "$PA" "$PB"; wait "$PA" "$PB" || fail "the agents exited with $?"
echo "test_service_lanes: ok"
