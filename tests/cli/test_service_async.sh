#!/usr/bin/env bash
# migschedd's HTTP front is event-driven (src/service/http.c): with ONE HTTP
# thread (--http-threads 1), connections that wait -- long polls, event
# streams, POSTs whose bodies have not all arrived -- must not keep others
# from being answered, and each waiting one is answered once its cause
# arrives. Clients that disconnect while their request is suspended (a POST
# waiting for its commit, a parked long poll or stream) must not crash the
# daemon, and the POSTs they sent are durable all the same. Ends with a
# SIGTERM while long polls wait: they are answered, the exit is clean (ASan
# in the sanitized build).
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
command -v jq >/dev/null || { echo "jq missing (scripts/deps/test/service.list)"; exit 1; }
command -v python3 >/dev/null || { echo "python3 missing (scripts/deps/test/service.list)"; exit 1; }

for bad in 0 65 x; do
    out=$("$MIGSCHEDD" --http-threads "$bad" --state-dir "$SVC_TMP/bad" 2>&1) && fail "--http-threads $bad accepted"
    echo "$out" | grep -q -- "--http-threads: '$bad' is .*; expected an integer in \[1, 64\]" || fail "--http-threads $bad: $out"
done
svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/s" --node a=2xA100-40GB --op-delay 0 --http-threads 1 \
    --max-conns 64
curl -sf -o /dev/null -XPOST "$B/v1/jobs" -d '{"id":"seed","profile":"1g.5gb","duration_s":3600}' ||
    fail "seed POST"
# the POST's 201 comes at its commit; the job's "running" event comes later,
# from the placement, and would end the long polls below if it came after
# they start
wait_for sh -c "curl -s '$B/v1/events?since=0&timeout=0' | jq -e 'any(.events[]; .state == \"running\")' >/dev/null" ||
    fail "seed never runs"
next=$(curl -s "$B/v1/events?since=0&timeout=0&limit=10000" | jq .next)

# 1. 8 long polls and 2 event streams wait for events that have not happened;
# 6 POSTs have sent their headers and half their bodies. 16 connections
# pending on one HTTP thread: /healthz and GET /v1/jobs/{id} are answered.
lps=()
for i in $(seq 1 8); do
    curl -s --max-time 30 "$B/v1/events?since=$next&timeout=25" > "$SVC_TMP/lp$i" &
    lps+=($!)
done
for i in 1 2; do
    curl -sN --max-time 30 "$B/v1/events/stream?since=$next&limit=1" > "$SVC_TMP/sse$i" &
done
cat > "$SVC_TMP/slow.py" <<'EOF'
# hold N POST /v1/jobs with half a body sent; on "go" on stdin send the rest
# and print each status line
import socket, sys
port, n = int(sys.argv[1]), int(sys.argv[2])
socks = []
for i in range(n):
    body = ('{"id":"slow%d","profile":"1g.5gb","duration_s":3600}' % i).encode()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body))
    s.sendall(body[:len(body) // 2])
    socks.append((s, body))
print("held", flush=True)
sys.stdin.readline()
for s, body in socks:
    s.sendall(body[len(body) // 2:])
for s, body in socks:
    s.settimeout(20)
    data = b""
    while b"\r\n" not in data:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    print(data.split(b"\r\n")[0].decode(errors="replace"), flush=True)
    s.close()
EOF
coproc SLOW { python3 "$SVC_TMP/slow.py" "$SVC_PORT" 6; }
slow_out=${SLOW[0]} slow_in=${SLOW[1]} slow_pid=$SLOW_PID   # bash unsets them when it ends
read -r -t 10 held <&"$slow_out" || fail "the slow POSTs did not connect"
[ "$held" = held ] || fail "slow POSTs: $held"
sleep 0.5   # the long polls and streams are parked by now
for i in $(seq 1 20); do
    curl -sf --max-time 5 -o /dev/null "$B/healthz" || fail "/healthz not answered while 16 connections wait"
    code=$(curl -s --max-time 5 -o "$SVC_TMP/j" -w '%{http_code}' "$B/v1/jobs/seed")
    [ "$code" = 200 ] && [ "$(jq -r .id "$SVC_TMP/j")" = seed ] ||
        fail "GET /v1/jobs/seed not answered while 16 connections wait: $code"
done
code=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "$B/v1/cluster")
[ "$code" = 200 ] || fail "/v1/cluster (through the loop) not answered while connections wait: $code"
for i in $(seq 1 8); do
    [ -s "$SVC_TMP/lp$i" ] && fail "long poll $i answered before any event: $(cat "$SVC_TMP/lp$i")"
done
echo "1 HTTP thread, 16 connections waiting: 20 x /healthz and GET /v1/jobs/{id} answered"

# the slow POSTs finish: each a 201; their events end the long polls and
# the streams
echo go >&"$slow_in"
codes=$(timeout 20 cat <&"$slow_out")
[ "$(echo "$codes" | grep -c ' 201 ')" = 6 ] || fail "slow POSTs: $codes"
wait "$slow_pid" 2>/dev/null
for p in "${lps[@]}"; do wait "$p" || fail "a long poll failed (curl status $?)"; done
for i in $(seq 1 8); do
    n=$(jq '.events | length' "$SVC_TMP/lp$i")
    [ "$n" -ge 1 ] && [ "$(jq .events[0].seq "$SVC_TMP/lp$i")" = "$next" ] ||
        fail "long poll $i: $(cat "$SVC_TMP/lp$i")"
done
for i in 1 2; do
    wait_for grep -q "^id: $next\$" "$SVC_TMP/sse$i" || fail "stream $i: $(cat "$SVC_TMP/sse$i")"
done
echo "6 slow POSTs: 201 each; the 8 long polls and 2 streams woke on the first event ($next)"

# 2. disconnects while suspended: 200 POSTs whose clients close (with a RST)
# right after sending, some while their request waits for its commit; long
# polls and streams whose clients go away while parked
cat > "$SVC_TMP/gone.py" <<'EOF'
import socket, struct, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
for i in range(n):
    body = ('{"id":"gone%d","profile":"1g.5gb","duration_s":0.01}' % i).encode()
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body) + body)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    time.sleep((0, 0.0005, 0.001, 0.002)[i % 4])   # reset before, while or after it waits for its commit
    s.close()   # RST: the answer has nowhere to go
EOF
for i in $(seq 1 4); do
    curl -s --max-time 0.3 "$B/v1/events?since=100000000&timeout=2" > /dev/null &
    curl -sN --max-time 0.3 "$B/v1/events/stream?since=100000000&heartbeat=1" > /dev/null &
done
python3 "$SVC_TMP/gone.py" "$SVC_PORT" 200 || fail "the disconnecting client failed"
sleep 2.5   # the abandoned long polls time out, the streams' heartbeats fail
kill -0 "$SVC_PID" 2>/dev/null || fail "migschedd died after clients went away"
curl -sf -o /dev/null "$B/healthz" || fail "/healthz after the disconnects"
# a POST that was read is committed although its client is gone: it is
# there, or (reset before the daemon read it) it never existed; nothing in
# between, and what is visible survives a restart (3.)
seen=0
for i in $(seq 0 199); do
    code=$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/jobs/gone$i")
    case $code in 200) seen=$((seen + 1)) ;; 404) ;; *) fail "GET gone$i: $code" ;; esac
done
[ "$seen" -ge 1 ] || fail "none of 200 abandoned POSTs was committed (the path is not exercised)"
# the same POST again is the same job (idempotent): committed, not half-made
code=$(curl -s -o "$SVC_TMP/g" -w '%{http_code}' -XPOST "$B/v1/jobs" \
    -d '{"id":"gone0","profile":"1g.5gb","duration_s":0.01}')
case $code in 200 | 201) ;; *) fail "re-POST gone0: $code $(cat "$SVC_TMP/g")" ;; esac
echo "200 POSTs from clients that reset 0-2 ms after sending: $seen committed and visible, the daemon fine"

# 3. restart: what was visible is durable
svc_stop
svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/s" --node a=2xA100-40GB --op-delay 0 --http-threads 1
seen2=0
for i in $(seq 0 199); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/jobs/gone$i")" = 200 ] && seen2=$((seen2 + 1))
done
[ "$seen2" -ge "$seen" ] || fail "after a restart $seen2 of the $seen visible jobs remain"
for i in $(seq 0 5); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/jobs/slow$i")" = 200 ] || fail "slow$i lost"
done

# 4. SIGTERM with long polls parked: each is answered, the exit is clean
for i in $(seq 1 4); do
    curl -s --max-time 30 "$B/v1/events?since=100000000&timeout=30" > "$SVC_TMP/term$i" &
done
sleep 0.5
svc_stop   # within its 10 s (lib.sh): parked long polls do not hold the shutdown
for i in $(seq 1 4); do
    wait_for test -s "$SVC_TMP/term$i" || fail "parked long poll $i not answered at SIGTERM"
    jq -e '.events | length == 0' "$SVC_TMP/term$i" >/dev/null || fail "term$i: $(cat "$SVC_TMP/term$i")"
done
echo "restart: all $seen2 visible jobs durable; SIGTERM answered 4 parked long polls and exited 0"
echo "test_service_async: ok"
