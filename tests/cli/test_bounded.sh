#!/usr/bin/env bash
# The simulator's work is bounded by its events, not by simulated time:
# huge creation delays, migration pauses and durations cost as many events
# as small ones (issue 8, defect 2), for every policy.
set -eu
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

printf 'job_id,arrival_s,profile,duration_s\n0,0,7g,100\n1,50,4g,10\n' > "$tmp/a.csv"
printf 'job_id,arrival_s,profile,duration_s\n0,0,7g,1e9\n1,50,4g,10\n' > "$tmp/b.csv"
events() { "$M" simulate "$@" --metrics-out - --quiet | sed -n 's/.*"events": \([0-9]*\).*/\1/p'; }
for p in fa node-profile static first-fit best-fit mfi fgd timeslice; do
    small=$(events --trace "$tmp/a.csv" --gpus 1 --policy "$p")
    for extra in "--create-s 1e9" "--migrate-s 1e9" ""; do
        for tr in a b; do
            # shellcheck disable=SC2086
            n=$(timeout 20 "$M" simulate --trace "$tmp/$tr.csv" --gpus 1 --policy "$p" $extra \
                --metrics-out - --quiet | sed -n 's/.*"events": \([0-9]*\).*/\1/p') \
                || fail "$p $tr $extra did not finish"
            [ -n "$n" ] || fail "$p $tr $extra: no event count"
            # two arrivals, two finishes, and at most a few wake-ups
            [ "$n" -le $((small + 4)) ] || fail "$p $tr $extra: $n events (small delays: $small)"
        done
    done
done
echo ok
