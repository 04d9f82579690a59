#!/usr/bin/env bash
# The CLI's client commands against a daemon: submit, jobs, status (slice
# maps), cancel, watch, the bearer token, and the exit codes scripts use
# (0 ok, 1 refused, 2 usage, 3 unreachable, 4 not found).
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
M=${MIGSCHED:-build-asan/migsched}
[ -x "$M" ] || M=build/migsched
echo "a-token-of-enough-length-123" > "$SVC_TMP/token"
svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/state" --node a=2xA100-40GB --node c=1xA100-40GB:timeslice=2 \
    --op-delay 0 --token-file "$SVC_TMP/token"
T=(--server "$B" --token-file "$SVC_TMP/token")

out=$("$M" submit "${T[@]}" --id c1 --profile 3g --label team=v) || fail "submit: $?"
case "$out" in "c1 "*) ;; *) fail "submit printed '$out'";; esac
"$M" submit --server "$B" --profile 1g 2>/dev/null; [ $? = 1 ] || fail "no token: want exit 1"
"$M" submit "${T[@]}" --profile 1g --model A30 2>/dev/null; [ $? = 1 ] || fail "422: want exit 1"
"$M" submit "${T[@]}" --gang x 2>/dev/null; [ $? = 2 ] || fail "usage: want exit 2"
"$M" status --server http://127.0.0.1:1 2>/dev/null; [ $? = 3 ] || fail "unreachable: want exit 3"
"$M" watch "${T[@]}" --job c1 --until running > "$SVC_TMP/watch" || fail "watch"
grep -q ' c1 running$' "$SVC_TMP/watch" || fail "watch output: $(cat "$SVC_TMP/watch")"
"$M" status "${T[@]}" > "$SVC_TMP/status" || fail "status"
grep -q 'c1' "$SVC_TMP/status" && grep -q 'FragCost' "$SVC_TMP/status" && grep -q '0   1   2   3' "$SVC_TMP/status" \
    || fail "status output: $(cat "$SVC_TMP/status")"
"$M" jobs "${T[@]}" --label team=v --all | grep -qE '^c1 +running +a/' || fail "jobs"
"$M" cancel "${T[@]}" c1 | grep -q 'c1 cancelled' || fail "cancel"
"$M" cancel "${T[@]}" nope 2>/dev/null; [ $? = 4 ] || fail "not found: want exit 4"
# SIGHUP reloads the token: the old one stops working
cp "$SVC_TMP/token" "$SVC_TMP/token-old"
echo "another-token-of-enough-length" > "$SVC_TMP/token"
kill -HUP "$SVC_PID"
wait_for grep -q 'token file reloaded' "$SVC_TMP/log" || fail "no reload"
"$M" submit "${T[@]}" --profile 1g >/dev/null || fail "the new token"
"$M" submit --server "$B" --token-file "$SVC_TMP/token-old" --profile 1g 2>/dev/null; [ $? = 1 ] || fail "the old token still works"
svc_stop
echo "test_service_cli: ok"
