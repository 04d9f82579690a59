#!/usr/bin/env bash
# GET /v1/events/stream over real HTTP: Server-Sent Events in order, the
# same events as the long poll, a resume with Last-Event-ID that loses
# nothing and repeats nothing, heartbeats, the bound on open streams, and a
# SIGTERM that ends open streams.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
command -v jq >/dev/null || { echo "jq missing (scripts/deps/test/service.list)"; exit 1; }

# --max-conns 16: at most 4 streams
svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/s" --node a=2xA100-40GB --op-delay 0 --time-scale 50 \
    --max-conns 16
S="$B/v1/events/stream"
submit() {   # FROM TO: jobs jFROM..jTO of 1 s (20 ms at --time-scale 50)
    local i
    for i in $(seq "$1" "$2"); do
        curl -s -o /dev/null -XPOST "$B/v1/jobs" -d "{\"id\":\"j$i\",\"profile\":\"3g\",\"duration_s\":1}"
    done
}
# events of an SSE capture as "seq job state" lines; checks id == seq
parse() {
    awk '/^id: /{id=$2} /^data: /{print id " " substr($0, 7)}' "$1" |
        while read -r id data; do
            seq=$(echo "$data" | jq -r .seq)
            [ "$id" = "$seq" ] || { echo "BAD id $id seq $seq"; continue; }
            echo "$data" | jq -r '"\(.seq) \(.job) \(.state)"'
        done
}
# every event of the long poll as "seq job state" lines
all_events() {
    curl -s "$B/v1/events?since=0&timeout=0&limit=10000" | jq -r '.events[] | "\(.seq) \(.job) \(.state)"'
}
wait_done() {   # N: until N jobs are done
    local i
    for i in $(seq 1 200); do
        [ "$(curl -s "$B/v1/jobs?state=done&limit=1000" | jq '.jobs | length')" -ge "$1" ] && return 0
        sleep 0.05
    done
    fail "jobs did not finish"
}

# 1. a stream open from the start sees every event, in order, as the long poll
curl -sN "$S?heartbeat=1" > "$SVC_TMP/a.sse" &
A=$!
sleep 0.3
submit 1 12
wait_done 12
sleep 1.5   # a heartbeat is due
parse "$SVC_TMP/a.sse" > "$SVC_TMP/a.ev"
all_events > "$SVC_TMP/all.ev"
grep -q BAD "$SVC_TMP/a.ev" && fail "an id is not its event's seq"
[ "$(wc -l < "$SVC_TMP/all.ev")" -ge 36 ] || fail "too few events: $(wc -l < "$SVC_TMP/all.ev")"
cmp -s "$SVC_TMP/a.ev" "$SVC_TMP/all.ev" || fail "the stream differs from the long poll: $(diff "$SVC_TMP/a.ev" "$SVC_TMP/all.ev" | head)"
awk 'NR > 1 && $1 != prev + 1 {bad = 1} {prev = $1} END {exit bad}' "$SVC_TMP/a.ev" || fail "seqs not consecutive"
grep -q '^: heartbeat' "$SVC_TMP/a.sse" || fail "no heartbeat"
grep -q '^Content-Type: text/event-stream' <(curl -sN -D - -o /dev/null "$S?limit=1") || fail "content type"
echo "stream: $(wc -l < "$SVC_TMP/a.ev") events in order, as the long poll, with heartbeats"

# 2. resume: read part, disconnect, more jobs, reconnect with Last-Event-ID
curl -sN "$S?limit=10" > "$SVC_TMP/b1.sse" || fail "limit: the stream did not end"
last=$(awk '/^id: /{id=$2} END{print id}' "$SVC_TMP/b1.sse")
[ "$last" = "$(sed -n 10p "$SVC_TMP/all.ev" | cut -d' ' -f1)" ] || fail "limit=10 ended at id $last"
submit 13 20
wait_done 20
n=$(all_events | wc -l)
curl -sN -H "Last-Event-ID: $last" "$S?limit=$((n - 10))" > "$SVC_TMP/b2.sse" || fail "resume did not end"
cat <(parse "$SVC_TMP/b1.sse") <(parse "$SVC_TMP/b2.sse") > "$SVC_TMP/b.ev"
all_events > "$SVC_TMP/all.ev"
cmp -s "$SVC_TMP/b.ev" "$SVC_TMP/all.ev" || fail "resume lost or repeated events: $(diff "$SVC_TMP/b.ev" "$SVC_TMP/all.ev" | head)"
# ?since=N is the same start as Last-Event-ID: N-1
curl -sN "$S?since=$((last + 1))&limit=3" > "$SVC_TMP/c.sse"
[ "$(parse "$SVC_TMP/c.sse")" = "$(parse "$SVC_TMP/b2.sse" | head -3)" ] || fail "since= and Last-Event-ID disagree"
echo "resume with Last-Event-ID: $n events, none lost, none twice"

# 3. errors and the bound on open streams (A is still open: 3 more fit)
code=$(curl -s -o "$SVC_TMP/e" -w '%{http_code}' -H 'Last-Event-ID: x' "$S")
[ "$code" = 400 ] && [ "$(jq -r .error.field "$SVC_TMP/e")" = Last-Event-ID ] || fail "bad Last-Event-ID: $code"
code=$(curl -s -o "$SVC_TMP/e" -w '%{http_code}' "$S?heartbeat=0")
[ "$code" = 400 ] && [ "$(jq -r .error.field "$SVC_TMP/e")" = heartbeat ] || fail "bad heartbeat: $code"
others=()
for i in 1 2 3; do
    curl -sN "$S" > /dev/null &
    others+=($!)
done
sleep 0.5
code=$(curl -s -o "$SVC_TMP/e" -w '%{http_code}' "$S")
[ "$code" = 503 ] && grep -q 'at most 4 event streams' "$SVC_TMP/e" || fail "a 5th stream: $code $(cat "$SVC_TMP/e")"
kill "${others[@]}" 2>/dev/null
wait "${others[@]}" 2>/dev/null
sleep 0.3
# a closed stream frees its place once the daemon notices (at its next write)
submit 21 21
ok=0
for i in $(seq 1 40); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$S?limit=1")
    [ "$code" = 200 ] && { ok=1; break; }
    sleep 0.1
done
[ "$ok" = 1 ] || fail "closed streams do not free their places"
echo "bound: 4 streams, the 5th a 503; errors name the field"

# 4. SIGTERM ends the open stream A and the daemon exits cleanly, at once
t0=$(date +%s)
kill -TERM "$SVC_PID"
wait "$SVC_PID" || fail "unclean exit with a stream open"
wait "$A" 2>/dev/null
[ $(($(date +%s) - t0)) -le 6 ] || fail "SIGTERM took too long with a stream open"
echo "test_service_sse: ok"
