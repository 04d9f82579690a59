#!/usr/bin/env bash
# migschedd's queue and policy options are the library's one option table
# (options.h, ms_opt_set; also as --key=value): every
# name `migschedd --help` lists works on the command line and in a config
# file, and a bad value gets the library's message naming the option and its
# range (and the file and line).
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh

# a valid value for every policy option; a new option fails this test until
# it is added here
declare -A VAL=([lb-threshold]=0.5 [balance]=flag [dynamic]=flag [migration]=flag [max-moves]=8
    [static-layout]=4g+2g+1g [demand-window]=128 [hysteresis]=60 [replicas]=2 [seed]=7
    [migrate-cost]=5 [interference-beta]=0.1 [room-queue-max]=16
    [queue]=fifo [backfill-bound]=inf [aging-rate]=2 [default-estimate]=600
    [preempt]=flag [preempt-grace]=30 [preempt-after]=10 [preempt-max-lost]=600 [preempt-rate]=5 [preempt-move]=flag
    [tenant-half-life]=3600)
names=$("$MIGSCHEDD" --help | sed -n '/^queue and policy options/,$p' | sed -n 's/^  --\([a-z-]*\).*/\1/p')
[ -n "$names" ] || fail "--help lists no policy options"
args=() conf=$SVC_TMP/all.conf
printf 'node = a=2xA100-40GB\n' > "$conf"
for n in $names; do
    [ -n "${VAL[$n]:-}" ] || fail "policy option '$n' has no test value here"
    if [ "${VAL[$n]}" = flag ]; then
        args+=("--$n" "--no-$n")
        printf '%s = true\nno-%s = false\n' "$n" "$n" >> "$conf"
    else
        args+=("--$n" "${VAL[$n]}")
        printf '%s = %s\n' "$n" "${VAL[$n]}" >> "$conf"
    fi
done
[ "$(echo "$names" | wc -l)" -eq "${#VAL[@]}" ] || fail "the test knows options --help does not list"

svc_start "$SVC_TMP/log1" --state-dir "$SVC_TMP/s1" --node a=2xA100-40GB --op-delay 0 --policy fa "${args[@]}"
kill "$SVC_PID"; wait "$SVC_PID" || fail "command line: unclean exit"
svc_start "$SVC_TMP/log2" --state-dir "$SVC_TMP/s2" --config "$conf" --op-delay 0 --policy static
kill "$SVC_PID"; wait "$SVC_PID" || fail "config file: unclean exit"
echo "all $(echo "$names" | wc -w) policy options accepted on the command line and in a file"

# the library's errors: option, range, value; file:line in a file
bad() {   # EXPECTED-TEXT ARGS...
    local want=$1
    shift
    "$MIGSCHEDD" --state-dir "$SVC_TMP/bad" --node a=1xA100-40GB "$@" 2>"$SVC_TMP/err" >/dev/null
    [ $? -eq 2 ] || fail "'$*' accepted"
    grep -qF -- "$want" "$SVC_TMP/err" || fail "'$*': want '$want', got: $(cat "$SVC_TMP/err")"
}
bad "--max-moves: '-1' is out of range; expected an integer in [0, 1000000]" --max-moves -1
bad "--demand-window: 'x' is not an integer; expected an integer in [1, 1000000]" --demand-window x
bad "--interference-beta: '11' is out of range; expected a number in [0, 10]" --interference-beta 11
bad "--room-queue-max: '-3' is out of range; expected an integer in [0, 1000000000]" --room-queue-max -3
bad "--seed needs a value" --seed
bad "unknown option '--no-seed'" --no-seed
bad "--queue: 'lifo' is not a choice; expected one of easy, backfill or fifo" --queue lifo
bad "--queue: 'lifo' is not a choice; expected one of easy, backfill or fifo" --queue=lifo
bad "--aging-rate: '-1' is out of range; expected a number in [0, 1e+06]" --aging-rate=-1
bad "--queue needs a value" --queue
bad "--tenant-half-life: '-1' is out of range; expected a number in [0, 1e+12]" --tenant-half-life=-1
bad "--preempt-max-lost: '-5' is out of range; expected a number in [0, 1e+12]" --preempt-max-lost=-5
bad "--tenant-half-life: 'x' is not a decimal number; expected a number in [0, 1e+12]" --tenant-half-life x
bad "--beta: a simulator option, not one of this command's" --beta 0.1
# the daemon's own numbers: number.h's syntax, the same message
bad "--commit-delay: '101' is out of range; expected a number in [0, 100]" --commit-delay 101
bad "--commit-delay: '-1' is out of range; expected a number in [0, 100]" --commit-delay=-1
bad "--max-conns: '0x10' is not an integer; expected an integer in [4, 10000]" --max-conns 0x10
printf 'node = a=1xA100-40GB\n\nhysteresis = -5\n' > "$SVC_TMP/bad.conf"
bad "bad.conf:3: hysteresis: '-5' is out of range; expected a number in [0, 1e+09]" --config "$SVC_TMP/bad.conf"
printf 'node = a=1xA100-40GB\nno-migration = maybe\n' > "$SVC_TMP/bad.conf"
bad "bad.conf:2: migration: 'maybe' is not true or false" --config "$SVC_TMP/bad.conf"
printf 'node = a=1xA100-40GB\ntenant-half-life = 2e12\n' > "$SVC_TMP/bad.conf"
bad "bad.conf:2: tenant-half-life: '2e12' is out of range; expected a number in [0, 1e+12]" --config "$SVC_TMP/bad.conf"
echo "test_service_config: ok"
