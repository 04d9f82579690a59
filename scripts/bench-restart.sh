#!/usr/bin/env bash
# The daemon's restart with a full store: wrk fills it with unpaced POSTs
# for SECONDS (4: about 120,000 jobs on a quiet 2-core machine), SIGTERM,
# then RESTARTS restarts, each timed from its start to /readyz answering 200,
# with the daemon's peak RSS (VmHWM) once ready. Not a test: it prints
# figures (docs/performance.md).
#   bash scripts/bench-restart.sh [SECONDS] [RESTARTS]
# MIGSCHEDD=path runs that daemon binary instead of build-bench's.
set -eu
cd "$(dirname "$0")/.."
secs=${1:-4}
restarts=${2:-3}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)"; exit 2; }
command -v sqlite3 >/dev/null || { echo "sqlite3 is not installed (apt-get install sqlite3)"; exit 2; }
if [ -z "${MIGSCHEDD:-}" ]; then
    make -s BUILD=build-bench OPT="-O2 -g -DNDEBUG" all >/dev/null
    MIGSCHEDD=build-bench/migschedd
fi
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
args=(--listen "127.0.0.1:$port" --state-dir "$dir/state" --node a=8xA100-40GB --node b=8xH100-80GB
      --op-delay 0 --time-scale 1)
ready() { until curl -sf -o /dev/null "http://127.0.0.1:$port/readyz"; do sleep 0.01; done; }
"$MIGSCHEDD" "${args[@]}" 2>"$dir/log" &
pid=$!
ready
wrk -t2 -c64 -d"${secs}s" -s scripts/wrk/post_jobs.lua "http://127.0.0.1:$port" -- 60 | grep "requests in"
kill -TERM $pid; wait $pid || true
echo "jobs in the store: $(sqlite3 "$dir/state/migschedd.db" 'SELECT COUNT(*) FROM jobs')"
for r in $(seq 1 "$restarts"); do
    t0=$(date +%s.%N)
    "$MIGSCHEDD" "${args[@]}" 2>>"$dir/log" &
    pid=$!
    ready
    t1=$(date +%s.%N)
    rss=$(awk '/VmHWM/ {print int($2 / 1024)}' "/proc/$pid/status")
    kill -TERM $pid; wait $pid || true
    awk -v r="$r" -v a="$t0" -v b="$t1" -v m="$rss" 'BEGIN {printf "restart %d: ready in %.2f s, peak RSS %d MB\n", r, b - a, m}'
done
pid=
