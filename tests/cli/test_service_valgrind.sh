#!/usr/bin/env bash
# A short daemon run under valgrind (the plain build: ASan and valgrind do
# not mix): submissions with failing creates, a cancel, every read endpoint,
# the long poll and an event stream left open at SIGTERM. No error, no leak,
# exit 0.
set -u
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "valgrind missing (scripts/deps/test/service-perf.list)"; exit 1; }
D=${MIGSCHEDD_PLAIN:-build/migschedd}
[ -n "${MIGSCHEDD_PLAIN:-}" ] || MAKEFLAGS= MFLAGS= make -s -j2 "$D" >/dev/null || { echo "FAIL: cannot build $D"; exit 1; }
MIGSCHEDD=$D
. tests/service/lib.sh
export MIGSCHEDD

# a random port, another one if it is taken (as svc_start does)
for try in 1 2 3 4 5 6 7 8; do
    port=$(free_port)
    B=http://127.0.0.1:$port
    valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=9 \
        "$D" --listen 127.0.0.1:$port --state-dir "$SVC_TMP/s" --node a=4xA100-40GB \
        --node c=2xA100-40GB:timeslice=4 --time-scale 20 --sim-fail create:4 2>"$SVC_TMP/vg.log" &
    VG=$!
    SVC_PIDS+=("$VG")
    up=0
    for i in $(seq 1 300); do
        curl -sf -o /dev/null "$B/readyz" && { up=1; break; }
        kill -0 "$VG" 2>/dev/null || break
        sleep 0.1
    done
    [ "$up" -eq 1 ] && break
    kill -0 "$VG" 2>/dev/null && fail "not ready under valgrind"
    wait "$VG" 2>/dev/null
    grep -q '"cannot listen"' "$SVC_TMP/vg.log" || { tail -20 "$SVC_TMP/vg.log"; fail "migschedd under valgrind exited"; }
done
curl -sf -o /dev/null "$B/readyz" || fail "not ready under valgrind"
curl -sN "$B/v1/events/stream?heartbeat=1" >/dev/null &
for i in $(seq 1 30); do
    curl -s -o /dev/null -XPOST "$B/v1/jobs" \
        -d "{\"id\":\"v$i\",\"profile\":\"$((i % 4 + 1))g\",\"duration_s\":20,\"migratable\":true,\"labels\":{\"k\":\"v\"}}"
done
curl -s -o /dev/null -XDELETE "$B/v1/jobs/v3"
for u in /v1/cluster /metrics "/v1/jobs?limit=5&label=k=v" /v1/jobs/v5 "/v1/events?since=0&timeout=0" \
    "/v1/events/stream?limit=3" /; do
    curl -s -o /dev/null "$B$u" || fail "GET $u"
done
sleep 2
kill -TERM "$VG"
wait "$VG"
rc=$?
grep -q 'ERROR SUMMARY: 0 errors' "$SVC_TMP/vg.log" || { tail -40 "$SVC_TMP/vg.log"; fail "valgrind reports errors"; }
[ "$rc" -eq 0 ] || { tail -20 "$SVC_TMP/vg.log"; fail "exit $rc under valgrind"; }
echo "test_service_valgrind: $(grep -o 'total heap usage: [0-9,]* allocs' "$SVC_TMP/vg.log"), 0 errors, exit 0"
