#!/usr/bin/env bash
# Slow clients (issue 20, defect 13): connections that trickle a header or a
# body one byte a second fill every connection migschedd (--max-conns) and
# migsched-agent (--max-conns) allow; an ordinary request must still be
# answered, because each trickling connection is shut down at its header or
# body deadline (--header-timeout, --body-timeout). A client that opens more
# than --max-conns-per-ip connections from one address gets no more, and a
# client at another address is served at once.
#
# The trickling clients come from 127.0.0.2 ... (Linux routes all of
# 127/8 to lo), one connection each, so that the per-address bound does not
# hide the deadline. The assertions are on answers (curl's, with a generous
# --max-time) and on the server closing the trickling connections, never on
# a time. Without the deadlines (the tree before this test) the ordinary
# request is never answered: the trickle keeps libmicrohttpd's idle timeout
# from firing.
#
# GUARD_OPTS: the daemons' deadline options (the tree before them had none:
# run with GUARD_OPTS= to see the test fail there).
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
AGENT=${MIGSCHED_AGENT:-$(dirname "$MIGSCHEDD")/migsched-agent}
[ -x "$AGENT" ] || fail "no agent at $AGENT"
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
GUARD_OPTS=${GUARD_OPTS---header-timeout 2 --body-timeout 2}
read -r -a guard <<<"$GUARD_OPTS"

# trickle PORT N FIRST_IP MODE: N connections from 127.0.0.FIRST_IP+i, each
# sending a request's head (MODE head) or its whole head and then a
# 100000-byte body (MODE body) one byte a second, reconnecting when the
# server closes it, until killed. Writes "closed K" to $SVC_TMP/trickle.$MODE
# each time the server has closed K connections, and "open" once all N
# are connected.
trickle() {
    SVC_TMP=$SVC_TMP python3 - "$@" <<'EOF' &
import os, select, socket, sys, time
port, n, first, mode = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
out = os.environ["SVC_TMP"] + "/trickle." + mode
head = b"POST /v1/jobs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
if mode == "body":
    head += b"Content-Length: 100000\r\n\r\n"
conns, closed = {}, 0
def note(s):
    with open(out + ".tmp", "w") as f:
        f.write(s + "\n")
    os.replace(out + ".tmp", out)
def connect(i):
    s = socket.socket()
    s.bind(("127.0.0.%d" % (first + i), 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    s.setblocking(False)
    conns[s] = 0
    return s
for i in range(n):
    connect(i)
    time.sleep(0.02)
note("open")
while True:
    r, _, _ = select.select(list(conns), [], [], 1.0)
    for s in r:   # readable: the server answered or closed; either way it let go
        del conns[s]
        s.close()
        closed += 1
        note("closed %d" % closed)
    for s in list(conns):
        k = conns[s]
        data = head if (k == 0 and mode == "body") else (head[k:k + 1] if k < len(head) else b"x")
        try:
            s.send(data)
            conns[s] = k + len(data)
        except OSError:
            del conns[s]
            s.close()
            closed += 1
            note("closed %d" % closed)
    while len(conns) < n:   # an attacker comes back
        try:
            connect(len(conns))
        except OSError:
            break
    time.sleep(1.0)
EOF
    TRICKLE_PIDS+=($!)
    SVC_PIDS+=($!)
}
trickle_stop() {
    local p
    for p in "${TRICKLE_PIDS[@]}"; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
    TRICKLE_PIDS=()
    rm -f "$SVC_TMP"/trickle.*
}
closed_at_least() { # MODE K
    local f=$SVC_TMP/trickle.$1
    [ -f "$f" ] && [ "$(awk '/closed/ {print $2}' "$f")" -ge "$2" ] 2>/dev/null
}
TRICKLE_PIDS=()

# --- migschedd: 8 connections, 4 trickling headers and 4 trickling bodies --
svc_start "$SVC_TMP/d.log" --state-dir "$SVC_TMP/d" --node a=1xA100-40GB --max-conns 8 --http-threads 2 \
    "${guard[@]}"
trickle "$SVC_PORT" 4 2 head
trickle "$SVC_PORT" 4 6 body
wait_for test -f "$SVC_TMP/trickle.head" || fail "the head tricklers did not connect"
wait_for test -f "$SVC_TMP/trickle.body" || fail "the body tricklers did not connect"
sleep 1   # every connection is taken now (8 of 8)
code=$(curl -s -o "$SVC_TMP/out" -w '%{http_code}' --max-time 60 "$B/healthz")
[ "$code" = 200 ] && grep -q '"ok":true' "$SVC_TMP/out" ||
    fail "migschedd did not answer /healthz while 8 slow clients held its 8 connections (HTTP $code)"
wait_for closed_at_least head 4 || fail "migschedd did not close the clients trickling a header"
wait_for closed_at_least body 4 || fail "migschedd did not close the clients trickling a body"
# a POST through it all is answered too (a request that does not trickle)
code=$(curl -s -o "$SVC_TMP/out" -w '%{http_code}' --max-time 60 -XPOST "$B/v1/jobs" \
    -H 'Content-Type: application/json' -d '{"id": "through", "profile": "1g"}')
[ "$code" = 201 ] || fail "POST /v1/jobs among slow clients: HTTP $code: $(cat "$SVC_TMP/out")"
trickle_stop
svc_stop
grep -q '"closed slow connections' "$SVC_LOG" || fail "migschedd did not log the slow connections it closed"

# --- the per-address bound: 6 connections from one address, limit 3 --------
svc_start "$SVC_TMP/p.log" --state-dir "$SVC_TMP/p" --node a=1xA100-40GB --max-conns 8 --max-conns-per-ip 3 \
    --header-timeout 600 --body-timeout 600
python3 - "$SVC_PORT" >"$SVC_TMP/perip" <<'EOF'
import socket, sys, time
port, held, refused = int(sys.argv[1]), [], 0
for i in range(6):
    s = socket.socket()
    s.bind(("127.0.0.2", 0))
    s.connect(("127.0.0.1", port))
    s.send(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")   # a head that never ends
    held.append(s)
time.sleep(1)
for s in held:   # refused ones were closed by the server: readable, EOF
    s.setblocking(False)
    try:
        if s.recv(1) == b"":
            refused += 1
    except BlockingIOError:
        pass
    except OSError:
        refused += 1
print(refused)
EOF
[ "$(cat "$SVC_TMP/perip")" = 3 ] || fail "6 connections from one address with --max-conns-per-ip 3: $(cat "$SVC_TMP/perip") refused, wanted 3"
curl -sf --max-time 60 -o /dev/null "$B/healthz" || fail "another address was not served"
svc_stop

# --- migsched-agent: the same 8 of 8 ------------------------------------------
agent_start() {
    local log=$1 try i; shift
    SVC_LOG=$log
    for try in 1 2 3 4 5 6 7 8; do
        AG_PORT=$(free_port)
        "$AGENT" --listen 127.0.0.1:$AG_PORT "$@" 2>>"$log" &
        AG_PID=$!
        SVC_PIDS+=("$AG_PID")
        A=http://127.0.0.1:$AG_PORT
        for i in $(seq 1 200); do
            if curl -sf -o /dev/null "$A/healthz"; then return 0; fi
            kill -0 "$AG_PID" 2>/dev/null || break
            sleep 0.05
        done
        if kill -0 "$AG_PID" 2>/dev/null; then fail "the agent did not come up"; fi
        wait "$AG_PID" 2>/dev/null
        grep -q '"cannot listen"' "$log" || fail "the agent exited at start-up"
    done
    fail "no free port"
}
AG_CONNS=${AG_CONNS-8}
agent_start "$SVC_TMP/a.log" --backend sim --node-spec 1xA100-40GB --state-dir "$SVC_TMP/a" \
    --cdi-dir "$SVC_TMP/cdi" ${AG_CONNS:+--max-conns "$AG_CONNS"} "${guard[@]}"
n=${AG_CONNS:-64}
trickle "$AG_PORT" $((n / 2)) 2 head
trickle "$AG_PORT" $((n - n / 2)) $((2 + n / 2)) body
wait_for test -f "$SVC_TMP/trickle.head" || fail "the head tricklers did not connect to the agent"
wait_for test -f "$SVC_TMP/trickle.body" || fail "the body tricklers did not connect to the agent"
sleep 1
code=$(curl -s -o "$SVC_TMP/out" -w '%{http_code}' --max-time 60 "$A/v1/inventory")
[ "$code" = 200 ] || fail "the agent did not answer /v1/inventory while slow clients held its connections (HTTP $code)"
wait_for closed_at_least head $((n / 2)) || fail "the agent did not close the clients trickling a header"
wait_for closed_at_least body $((n - n / 2)) || fail "the agent did not close the clients trickling a body"
trickle_stop
kill -TERM "$AG_PID"
wait "$AG_PID" || fail "the agent exited with status $? after SIGTERM"
echo "PASS: test_slowloris"
