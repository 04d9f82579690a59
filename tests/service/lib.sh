# tests/service/lib.sh - shared by the migschedd tests (sourced).
# Starts daemons on 127.0.0.1 only, on a free port, and kills them on exit.
MIGSCHEDD=${MIGSCHEDD:-}
if [ -z "$MIGSCHEDD" ]; then
    if [ -x build-asan/migschedd ]; then MIGSCHEDD=build-asan/migschedd; else MIGSCHEDD=build/migschedd; fi
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
SVC_PIDS=()
SVC_TMP=$(mktemp -d)
svc_cleanup() {
    local p
    for p in "${SVC_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$SVC_TMP"
}
trap svc_cleanup EXIT

# free_port: a loopback TCP port nothing holds now, chosen by the kernel (bound
# to port 0, then closed), so two tests running at once (make check runs the
# gcc and clang suites side by side) do not draw the same one as a random pick
# could. A small race with other programs remains; the starters below retry
# on "cannot listen".
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

fail() { echo "FAIL: $*"; [ -n "${SVC_LOG:-}" ] && [ -f "$SVC_LOG" ] && tail -n 30 "$SVC_LOG"; exit 1; }

# svc_start LOG ARGS... : starts migschedd on a free loopback port; sets
# SVC_PID, SVC_PORT, B (the base URL). Fails the test if it does not come up.
svc_start() {
    local log=$1 try i; shift
    SVC_LOG=$log
    for try in 1 2 3 4 5 6 7 8; do
        SVC_PORT=$(free_port)
        "$MIGSCHEDD" --listen 127.0.0.1:$SVC_PORT "$@" 2>>"$log" &
        SVC_PID=$!
        SVC_PIDS+=("$SVC_PID")
        B=http://127.0.0.1:$SVC_PORT
        for i in $(seq 1 200); do
            if curl -sf -o /dev/null "$B/readyz"; then return 0; fi
            kill -0 "$SVC_PID" 2>/dev/null || break
            sleep 0.05
        done
        if kill -0 "$SVC_PID" 2>/dev/null; then fail "migschedd did not become ready"; fi
        wait "$SVC_PID" 2>/dev/null
        grep -q '"cannot listen"' "$log" || fail "migschedd exited at start-up"
    done
    fail "no free port"
}

# svc_stop: SIGTERM, and the exit status must be 0 (ASan leak check included).
svc_stop() {
    kill -TERM "$SVC_PID"
    local i
    for i in $(seq 1 200); do kill -0 "$SVC_PID" 2>/dev/null || break; sleep 0.05; done
    kill -0 "$SVC_PID" 2>/dev/null && fail "migschedd did not stop within 10 s of SIGTERM"
    wait "$SVC_PID" || fail "migschedd exited with status $? after SIGTERM"
}

# wait_for CMD... : retries a condition for up to 10 s.
wait_for() {
    local i
    for i in $(seq 1 200); do "$@" && return 0; sleep 0.05; done
    return 1
}

# The cluster must be consistent: no two instances on a GPU share a memory
# slice, and the backend holds exactly the view's instances (no leak).
check_cluster() {
    local c
    c=$(curl -sf "$B/v1/cluster") || fail "GET /v1/cluster"
    echo "$c" | jq -e '[.nodes[].gpus[] | [.instances[] | select(.start >= 0) | range(.start; .start + .size)]
                       | (length == (unique | length))] | all' >/dev/null || fail "instances overlap: $c"
    echo "$c" | jq -e '.backend.in_sync == true' >/dev/null || return 1
}
