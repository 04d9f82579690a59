#!/usr/bin/env bash
# The daemon's API under load from wrk (Debian's event-driven HTTP load
# generator): 64 keep-alive connections driven by 2 client threads, so the
# load generator does not spend the machine's cores on 64 client threads
# (migsched bench-api uses one thread per client). Not a test: it prints
# wrk's latency distribution for POST /v1/jobs (every answer a durable 201)
# and GET /v1/jobs/{id}, and the daemon's CPU time per request (utime +
# stime from /proc over the run: less sensitive to the rest of the machine
# than the latencies). docs/performance.md has the figures.
#   bash scripts/bench-api-wrk.sh [SECONDS] [CONNECTIONS] [POST_RATE] [GET_RATE]
# Without rates wrk sends as fast as the connections go (saturation: the
# closed loop's latency is then CONNECTIONS / throughput); with them it
# offers that many requests a second in all (scripts/wrk/pace.lua), which
# is how a latency target at a throughput is measured.
# MIGSCHEDD=path runs that daemon binary instead of build-bench's (to
# compare builds back to back); MIGSCHEDD_ARGS adds options to it;
# TIME_SCALE (1000) is the sim's: at 1000 the 60 s jobs of the POST run end
# after 60 ms, so the loop also ends and places about 1,900 jobs a second
# on the 16 GPUs (a stress no real cluster of 16 GPUs sees); at 1 nothing
# ends during the run and the POSTs measure the API and the store alone.
# FLOOR=1 first runs the GET script against scripts/wrk/floor.c (a
# one-thread epoll server with a canned answer of the same size, built with
# cc): what this machine, loopback and wrk cost at the GET rate, the floor
# under every figure after it.
# CLIENT_NICE=N runs wrk (the floor's too) at nice N: on a machine where
# the load generator shares the daemon's cores, wrk at 19 yields them to
# the daemon, as a client on another machine would not take them at all
# (docs/performance.md has the POST p99 both ways).
set -eu
cd "$(dirname "$0")/.."
wrk() { nice -n "${CLIENT_NICE:-0}" wrk "$@"; }   # nice runs the program, not this function
secs=${1:-10}
conns=${2:-64}
post_rate=${3:-0}
get_rate=${4:-0}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)"; exit 2; }
if [ -z "${MIGSCHEDD:-}" ]; then
    make -s BUILD=build-bench OPT="-O2 -g -DNDEBUG" all >/dev/null
    MIGSCHEDD=build-bench/migschedd
fi
dir=$(mktemp -d)
tck=$(getconf CLK_TCK)
# share METHOD ROUTE LE: the daemon's own count of that route's answers
# within LE seconds (migsched_http_request_duration_seconds: from the first
# byte it handled to the reply queued; wrk's figures add the kernel and wrk)
share() {
    curl -s "http://127.0.0.1:$port/metrics" | awk -v m="$1" -v r="$2" -v le="$3" '
        index($0, "migsched_http_request_duration_seconds_bucket{method=\"" m "\",route=\"" r "\",le=\"" le "\"}") == 1 { b = $2 }
        index($0, "migsched_http_request_duration_seconds_count{method=\"" m "\",route=\"" r "\"}") == 1 { c = $2 }
        END { if (c > 0) printf "daemon: %.2f%% of %s %s answered within %g ms (%d of %d)\n", 100 * b / c, m, r, le * 1000, b, c }'
}
rate() { if [ "$1" = 0 ]; then echo "unpaced"; else echo "paced at $1/s"; fi; }
cpu() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
# measure LUA ARGS...: a wrk run with its latency distribution, then the
# daemon's CPU microseconds per request over it
measure() {
    local lua=$1 c0 c1 n
    shift
    c0=$(cpu)
    wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$lua" "http://127.0.0.1:$port" "$@" | tee "$dir/wrk"
    c1=$(cpu)
    n=$(awk '/requests in/ {print $1}' "$dir/wrk")
    [ -n "$n" ] && [ "$n" -gt 0 ] &&
        awk -v c="$((c1 - c0))" -v t="$tck" -v n="$n" 'BEGIN {printf "daemon CPU: %.1f us a request\n", c * 1e6 / t / n}'
}
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
if [ "${FLOOR:-0}" = 1 ]; then
    mkdir -p build-bench
    cc -O2 -o build-bench/http-floor scripts/wrk/floor.c
    build-bench/http-floor "$port" &
    fpid=$!
    sleep 0.2
    echo "== the floor: scripts/wrk/floor.c, $conns connections, 2 threads, $secs s, $(rate "$get_rate")"
    wrk -t2 -c"$conns" -d"${secs}s" --latency -s scripts/wrk/get_jobs.lua "http://127.0.0.1:$port" -- 2000 "$get_rate" 2
    kill $fpid; wait $fpid 2>/dev/null || true
fi
$MIGSCHEDD --listen 127.0.0.1:$port --state-dir "$dir/state" --node a=8xA100-40GB \
    --node b=8xH100-80GB --op-delay 0 --time-scale "${TIME_SCALE:-1000}" ${MIGSCHEDD_ARGS:-} 2>"$dir/log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
for i in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
echo "== POST /v1/jobs, $conns connections, 2 threads, $secs s, $(rate "$post_rate")${CLIENT_NICE:+, wrk at nice $CLIENT_NICE}"
measure scripts/wrk/post_jobs.lua -- 60 "$post_rate" 2
share POST /v1/jobs 0.01
# the jobs above keep the loop and the store busy for a while (a queue of
# 100,000 jobs on 16 GPUs); GETs are measured on a fresh daemon holding
# 2 s of submissions of long jobs (nothing changes while it is read)
kill $pid; wait $pid 2>/dev/null || true
rm -rf "$dir/state"
$MIGSCHEDD --listen 127.0.0.1:$port --state-dir "$dir/state" --node a=8xA100-40GB \
    --node b=8xH100-80GB --op-delay 0 --time-scale "${TIME_SCALE:-1000}" ${MIGSCHEDD_ARGS:-} 2>"$dir/log" &
pid=$!
for i in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
wrk -t2 -c"$conns" -d2s -s scripts/wrk/post_jobs.lua "http://127.0.0.1:$port" -- 1000000 >/dev/null
sleep 3
echo "== GET /v1/jobs/{id}, $conns connections, 2 threads, $secs s, $(rate "$get_rate")"
measure scripts/wrk/get_jobs.lua -- 2000 "$get_rate" 2
share GET '/v1/jobs/{id}' 0.002
