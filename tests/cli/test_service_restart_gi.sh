#!/usr/bin/env bash
# A crash between a plan's ops leaves an idle GI that the plan created or
# was to destroy: start-up takes it for ours and transient (the journal's
# unsettled ops say so) and destroys it, instead of keeping it as an idle GI
# of the view, which a dynamic policy (fa+, the default) never destroys:
# before, a cancelled 7g's instance whose DESTROY the crash cut short stayed
# idle for good and no 1g could ever start on that GPU.
# The DESTROY is held back with --sim-fail destroy:1 (every destroy fails
# and is retried), so the crash lands between STOP and DESTROY every time.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
command -v jq >/dev/null || { echo "jq missing (scripts/deps/test/service.list)"; exit 1; }

state() { curl -sf "$B/v1/jobs/$1" | jq -r .state; }
is() { [ "$(state "$1")" = "$2" ]; }
insts() { curl -sf "$B/v1/cluster" | jq -c '[.nodes[].gpus[].instances[] | {start, profile, job}]'; }
post() { curl -s -o /dev/null -w '%{http_code}' -XPOST "$B/v1/jobs" -d "$1"; }

S=$SVC_TMP/s
svc_start "$SVC_TMP/log1" --state-dir "$S" --node a=1xA100-40GB --op-delay 0 --sim-fail destroy:1
[ "$(post '{"id":"big","profile":"7g","duration_s":3600}')" = 201 ] || fail "submit big"
wait_for is big running || fail "big never ran: $(state big)"
curl -sf -XDELETE "$B/v1/jobs/big" -o /dev/null || fail "cancel big"
wait_for grep -q '"op":"destroy"' "$SVC_TMP/log1" || fail "the DESTROY was never tried"
kill -9 "$SVC_PID"; wait "$SVC_PID" 2>/dev/null

svc_start "$SVC_TMP/log2" --state-dir "$S" --node a=1xA100-40GB --op-delay 0
grep -q '"unsettled_ops":[1-9]' "$SVC_TMP/log2" || fail "no unsettled op at start-up: the test tests nothing"
[ "$(post '{"id":"small","profile":"1g","duration_s":3600}')" = 201 ] || fail "submit small"
wait_for is small running || fail "the 1g never started after the restart: $(state small); instances $(insts)"
[ "$(state big)" = cancelled ] || fail "big is $(state big)"
check_cluster || fail "the view and the backend disagree"
svc_stop
echo "test_service_restart_gi: the idle 7g a cancel's cut-short DESTROY left is gone, the 1g runs"
