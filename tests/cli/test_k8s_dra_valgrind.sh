#!/usr/bin/env bash
# migschedd --dra under valgrind (the plain build: ASan and valgrind do not
# mix), against the stand-in API server tests/k8s/dra_stub_api.py (the real
# control plane takes one to three minutes to start here; the stub is
# enough to run every DRA thread: the watches, the loop, the writers, the
# webhook worker): the webhook gates two pods (one template read from the
# API server), the allocator writes a 1g.5gb claim and ungates its pod, a
# 7g.40gb pod waits for the GPU and gets it once the first claim goes,
# /dra/status; then SIGTERM with a watch of every kind open. No error, no
# definite or indirect leak, exit 0.
set -u
cd "$(dirname "$0")/../.."
command -v valgrind >/dev/null || { echo "valgrind missing (scripts/deps/test/service-perf.list)"; exit 1; }
command -v python3 >/dev/null || { echo "k8s dra valgrind: skipped (python3 not found)"; exit 77; }
D=${MIGSCHEDD_PLAIN:-build/migschedd}
[ -n "${MIGSCHEDD_PLAIN:-}" ] || MAKEFLAGS= MFLAGS= make -s -j2 "$D" >/dev/null || { echo "FAIL: cannot build $D"; exit 1; }
. tests/service/lib.sh
export PYTHONDONTWRITEBYTECODE=1
t0=$(date +%s)

python3 tests/k8s/dra_stub_api.py serve "$SVC_TMP/stub.port" 2>"$SVC_TMP/stub.log" &
SVC_PIDS+=("$!")
for i in $(seq 1 50); do [ -s "$SVC_TMP/stub.port" ] && break; sleep 0.1; done
[ -s "$SVC_TMP/stub.port" ] || fail "the stub API server did not start"
API=http://127.0.0.1:$(cat "$SVC_TMP/stub.port")
echo token >"$SVC_TMP/token"

for try in 1 2 3 4 5 6 7 8; do
    port=$(free_port)
    B=http://127.0.0.1:$port
    valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=9 \
        "$D" --dra --dra-driver gpu.nvidia.com --kube-api "$API" --kube-token-file "$SVC_TMP/token" \
        --listen 127.0.0.1:$port 2>"$SVC_TMP/vg.log" &
    VG=$!
    SVC_PIDS+=("$VG")
    up=0
    for i in $(seq 1 600); do
        curl -sf "$B/dra/status" 2>/dev/null | grep -q '"deciding":true' && { up=1; break; }
        kill -0 "$VG" 2>/dev/null || break
        sleep 0.1
    done
    [ "$up" -eq 1 ] && break
    kill -0 "$VG" 2>/dev/null && { tail -20 "$SVC_TMP/vg.log"; fail "not deciding under valgrind"; }
    wait "$VG" 2>/dev/null
    grep -q '"cannot listen"' "$SVC_TMP/vg.log" || { tail -20 "$SVC_TMP/vg.log"; fail "migschedd --dra under valgrind exited"; }
done
[ "$up" -eq 1 ] || fail "migschedd --dra never listened"
python3 tests/k8s/dra_stub_api.py run "$API" "$B" || { tail -30 "$SVC_TMP/vg.log"; fail "the workload"; }
kill -TERM "$VG"
wait "$VG"
rc=$?
grep -q 'ERROR SUMMARY: 0 errors' "$SVC_TMP/vg.log" || { tail -60 "$SVC_TMP/vg.log"; fail "valgrind reports errors"; }
[ "$rc" -eq 0 ] || { tail -20 "$SVC_TMP/vg.log"; fail "exit $rc under valgrind"; }
echo "test_k8s_dra_valgrind: $(grep -o 'total heap usage: [0-9,]* allocs' "$SVC_TMP/vg.log"), $(grep -oE "definitely lost: [0-9,]* bytes|no leaks are possible" "$SVC_TMP/vg.log" | head -n 1), 0 errors, exit 0, $(( $(date +%s) - t0 )) s"
