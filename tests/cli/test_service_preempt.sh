#!/usr/bin/env bash
# Preemption in migschedd (docs/tenants.md, "migschedd"; issue 24, item 4),
# on the real daemon with the sim backend, one A100-40GB:
#   - a 7g of priority 0 runs; a 1g of priority 10 arrives: the 7g is
#     stopped and queued again (GET shows it queued), the 1g runs, the
#     stream and the long poll carry a "preempted" event naming the 1g, and
#     migsched_preemptions_total counts it for the 7g's tenant (promtool);
#     when the 1g ends the 7g runs again, and the backend holds exactly the
#     view's instances;
#   - a victim with checkpoint_s runs again only what its last checkpoint
#     left (8 s with a checkpoint every 4 s, stopped after 4.6 s: 4 s),
#     also after a kill -9 while it waits (its kept run is stored);
#   - within --preempt-grace the 7g is no victim: the 1g waits;
#   - kill -9 once the preemption is committed (the 7g's GET says queued:
#     views are installed after the commit's fsync), at three moments of
#     the slow STOP / CREATE / START that follow, then a restart: the 7g is
#     queued, on no instance, and stays so (start-up submits by priority),
#     and the view and the backend agree (whether the 1g then runs depends
#     on the moment: see the loop);
#   - a gang of two at priority 10 preempts a gang of two at priority 0
#     (one victim, both GPUs), with its event; backend and view agree;
#   - --preempt-move: a migratable victim with a free start on another GPU
#     is moved there (still running, never queued again), the preemptor
#     runs, no preemption counted, backend and view agree;
#   - a bad --preempt-rate names the option (--preempt with --kube, pods
#     evicted: tests/k8s/test_e2e_preempt.sh).
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
command -v jq >/dev/null || { echo "jq missing (scripts/deps/test/service.list)"; exit 1; }

post() { curl -s -o "$SVC_TMP/out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d "$1" "$B/v1/jobs"; }
state() { curl -sf "$B/v1/jobs/$1" | jq -r .state; }
is() { [ "$(state "$1")" = "$2" ]; }
metric() { curl -sf "$B/metrics" | awk -v k="$1" '$1 == k { print $2 }'; }
insts_of() { curl -sf "$B/v1/cluster" | jq --arg j "$1" '[.nodes[].gpus[].instances[] | select(.job == $j)] | length'; }

# --- refused configurations ----------------------------------------------
"$MIGSCHEDD" --state-dir "$SVC_TMP/bad" --node a=1xA100-40GB --preempt --preempt-rate -1 2>"$SVC_TMP/err" >/dev/null
[ $? -eq 2 ] || fail "--preempt-rate -1 accepted"
grep -q "preempt-rate" "$SVC_TMP/err" || fail "bad rate: $(cat "$SVC_TMP/err")"

# --- a 1g of priority 10 preempts a 7g of priority 0 ---------------------
svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/s1" --node a=1xA100-40GB --op-delay 0 \
    --preempt --preempt-grace 0 --tenant batch
curl -sN --max-time 30 "$B/v1/events/stream" > "$SVC_TMP/stream" &
stream_pid=$!
[ "$(post '{"id":"big","profile":"7g","duration_s":3600,"priority":0,"tenant":"batch"}')" = 201 ] || fail "big"
wait_for is big running || fail "big did not run: $(state big)"
[ "$(post '{"id":"small","profile":"1g","duration_s":3,"priority":10}')" = 201 ] || fail "small"
wait_for is small running || fail "small did not run: $(state small)"
[ "$(state big)" = queued ] || fail "big is $(state big), not queued again, beside small"
[ "$(insts_of big)" = 0 ] || fail "big still holds an instance"
curl -sf "$B/v1/events?since=0&timeout=0" > "$SVC_TMP/ev" || fail "GET /v1/events"
jq -e '[.events[] | select(.job == "big" and .state == "preempted" and .by == "small")] | length == 1' \
    "$SVC_TMP/ev" >/dev/null || fail "no preempted event by small: $(cat "$SVC_TMP/ev")"
# the order of big's events: running, preempted, queued
jq -r '[.events[] | select(.job == "big") | .state] | join(" ")' "$SVC_TMP/ev" | grep -q "running preempted queued" \
    || fail "big's events: $(jq -c '[.events[] | select(.job == "big") | .state]' "$SVC_TMP/ev")"
[ "$(metric 'migsched_preemptions_total{tenant="batch"}')" = 1 ] || fail "preemptions of batch: $(curl -s "$B/metrics" | grep preempt)"
[ "$(metric 'migsched_preemptions_total{tenant="default"}')" = 0 ] || fail "preemptions of default"
curl -sf "$B/metrics" | promtool check metrics || fail "promtool check metrics"
# small ends after 3 s: big runs again, on one instance
for i in 1 2 3; do wait_for is big running && break; done
is big running || fail "big not running again after small ended: $(state big)"
[ "$(state small)" = done ] || fail "small is $(state small)"
[ "$(insts_of big)" = 1 ] || fail "big on $(insts_of big) instances"
wait_for check_cluster || fail "backend and view differ"
kill "$stream_pid" 2>/dev/null; wait "$stream_pid" 2>/dev/null
grep -q '"job":"big","state":"preempted","by":"small"' "$SVC_TMP/stream" || fail "the stream lacks the preempted event: $(cat "$SVC_TMP/stream")"
svc_stop

# --- a victim that checkpoints runs only what its last checkpoint left ---
# (docs/tenants.md, "Jobs that checkpoint"): an 8 s 7g saving every 4 s is
# stopped 4.6-7.9 s into its run (kept 4 s), so its second run is 4 s, not 8
ck_start() { # ck_start DIR: a daemon on DIR, one A100-40GB, no grace
    svc_start "$SVC_TMP/log_$1" --state-dir "$SVC_TMP/$1" --node a=1xA100-40GB --op-delay 0 \
        --preempt --preempt-grace 0
}
ck_preempted() { # ck_preempted DIR HI_DURATION: ck runs 4.6 s, then hi stops it
    ck_start "$1"
    [ "$(post '{"id":"ck","profile":"7g","duration_s":8,"checkpoint_s":4}')" = 201 ] || fail "ck ($1)"
    wait_for is ck running || fail "ck did not run ($1): $(state ck)"
    sleep 4.6
    [ "$(post '{"id":"hi","profile":"1g","duration_s":'"$2"',"priority":10}')" = 201 ] || fail "hi ($1)"
    wait_for is ck queued || fail "ck is $(state ck), not preempted ($1)"
    kept=$(curl -sf "$B/v1/jobs/ck" | jq '.kept_s')
    python3 -c "import sys; sys.exit(0 if 3.9 < $kept < 4.1 else 1)" ||
        fail "ck's kept_s is $kept while it waits ($1): want 4 (its checkpoint at 4 s)"
}
ck_ran_4() { # ck_ran_4 WHAT: ck ends, its last run 4 s (what its checkpoint left)
    for i in 1 2 3 4 5; do wait_for is ck done && break; done
    is ck done || fail "ck did not end ($1): $(state ck)"
    run=$(curl -sf "$B/v1/jobs/ck" | jq '.ended_at - .started_at')
    python3 -c "import sys; sys.exit(0 if 3.5 < $run < 6.5 else 1)" ||
        fail "ck's run $1 took $run s: want the 4 s its checkpoint left, not 8"
}
ck_preempted s_ck 1
[ "$(state hi)" = running ] || [ "$(state hi)" = done ] || fail "hi did not run: $(state hi)"
ck_ran_4 "after its preemption"
svc_stop

# --- and what it kept survives a crash: kill -9 while the victim waits ----
# (the kept run is stored with the job; before, a restart ran it whole)
ck_preempted s_ck2 2
kill -9 "$SVC_PID"
wait "$SVC_PID" 2>/dev/null
ck_start s_ck2
ck_ran_4 "after the restart"
wait_for check_cluster || fail "backend and view differ after the checkpointing victim's restart"
svc_stop

# --- within the grace period the young 7g is no victim -------------------
svc_start "$SVC_TMP/log2" --state-dir "$SVC_TMP/s2" --node a=1xA100-40GB --op-delay 0 \
    --preempt --preempt-grace 3600
[ "$(post '{"id":"big","profile":"7g","duration_s":3600}')" = 201 ] || fail "big (grace)"
wait_for is big running || fail "big did not run (grace)"
[ "$(post '{"id":"small","profile":"1g","duration_s":3,"priority":10}')" = 201 ] || fail "small (grace)"
sleep 2
[ "$(state small)" = queued ] || fail "small is $(state small) within big's grace"
[ "$(state big)" = running ] || fail "big is $(state big) within its grace"
[ "$(metric 'migsched_preemptions_total{tenant="default"}')" = 0 ] || fail "a preemption within the grace"
svc_stop

# --- --preempt-move: a migratable victim is moved, not stopped ----------
# first-fit on two A100-40GB: b (1g, priority 0, migratable) at GPU 0
# start 0, c (3g) at GPU 0 start 4, d (4g, priority 10: never a victim of
# p) at GPU 1 start 0; p (4g,
# priority 10) fits nowhere: b is its victim and, with a free 1g start on
# GPU 1, is moved there (still running, never queued), p takes GPU 0
gpu_of() { curl -sf "$B/v1/cluster" | jq -r --arg j "$1" '[.nodes[].gpus[] | select(any(.instances[]; .job == $j)) | .gpu | tostring] | join(",")'; }
svc_start "$SVC_TMP/log4" --state-dir "$SVC_TMP/s4" --node a=2xA100-40GB --op-delay 0 --policy first-fit \
    --preempt --preempt-grace 0 --preempt-move
[ "$(post '{"id":"b","profile":"1g","duration_s":3600,"migratable":true}')" = 201 ] || fail "b (move)"
wait_for is b running || fail "b did not run (move)"
[ "$(post '{"id":"c","profile":"3g","duration_s":3600,"priority":5}')" = 201 ] || fail "c (move)"
[ "$(post '{"id":"d","profile":"4g","duration_s":3600,"priority":10}')" = 201 ] || fail "d (move)"
wait_for is d running || fail "d did not run (move)"
[ "$(gpu_of b)" = 0 ] && [ "$(gpu_of d)" = 1 ] || fail "the setup: b on GPU $(gpu_of b), d on GPU $(gpu_of d)"
[ "$(post '{"id":"p","profile":"4g","duration_s":3600,"priority":10}')" = 201 ] || fail "p (move)"
wait_for is p running || fail "p did not run (move): $(state p)"
[ "$(gpu_of p)" = 0 ] || fail "p on GPU $(gpu_of p), not 0"
[ "$(state b)" = running ] || fail "b is $(state b): stopped, not moved"
[ "$(gpu_of b)" = 1 ] || fail "b on GPU $(gpu_of b) after the move, not 1"
curl -sf "$B/v1/events?since=0&timeout=0" > "$SVC_TMP/ev" || fail "GET /v1/events (move)"
[ "$(jq '[.events[] | select(.job == "b" and (.state == "queued" or .state == "preempted"))] | length' "$SVC_TMP/ev")" = 1 ] ||
    fail "b's events: $(jq -c '[.events[] | select(.job == "b") | .state]' "$SVC_TMP/ev")"
[ "$(metric 'migsched_preemptions_total{tenant="default"}')" = 0 ] || fail "a move counted as a preemption"
wait_for check_cluster || fail "backend and view differ after the move"
svc_stop

# --- gangs: a gang of two at priority 10 preempts a gang of two ---------
svc_start "$SVC_TMP/log5" --state-dir "$SVC_TMP/s5" --node a=2xA100-40GB --op-delay 0 \
    --preempt --preempt-grace 0
[ "$(post '{"id":"low","profile":"7g","gang":2,"duration_s":3600}')" = 201 ] || fail "low (gang)"
wait_for is low running || fail "low did not run (gang)"
[ "$(post '{"id":"hi","profile":"7g","gang":2,"duration_s":3600,"priority":10}')" = 201 ] || fail "hi (gang)"
wait_for is hi running || fail "hi did not run (gang): $(state hi)"
[ "$(insts_of hi)" = 2 ] || fail "hi on $(insts_of hi) instances, not 2"
[ "$(state low)" = queued ] && [ "$(insts_of low)" = 0 ] || fail "low is $(state low) on $(insts_of low) instances"
curl -sf "$B/v1/events?since=0&timeout=0" > "$SVC_TMP/ev" || fail "GET /v1/events (gang)"
[ "$(jq '[.events[] | select(.job == "low" and .state == "preempted" and .by == "hi")] | length' "$SVC_TMP/ev")" = 1 ] ||
    fail "low's events: $(jq -c '[.events[] | select(.job == "low")]' "$SVC_TMP/ev")"
wait_for check_cluster || fail "backend and view differ after the gang's preemption"
svc_stop

# --- kill -9 after the preemption's commit, at three moments -------------
for delay in 0 0.7 1.6; do
    D=$SVC_TMP/c$delay
    svc_start "$SVC_TMP/log3" --state-dir "$D" --node a=1xA100-40GB --op-delay 0.5 --preempt --preempt-grace 0
    [ "$(post '{"id":"big","profile":"7g","duration_s":3600}')" = 201 ] || fail "big (crash $delay)"
    wait_for is big running || fail "big did not run (crash $delay)"
    [ "$(post '{"id":"small","profile":"1g","duration_s":3600,"priority":10}')" = 201 ] || fail "small (crash $delay)"
    wait_for is big queued || fail "big not preempted (crash $delay): $(state big)"
    # the last event so far (big is queued: it does not start again
    # before the kill, small has the higher priority)
    last=$(curl -sf "$B/v1/events?since=0&timeout=0" | jq '[.events[].seq] | max // 0')
    sleep "$delay"
    kill -9 "$SVC_PID"
    wait "$SVC_PID" 2>/dev/null
    svc_start "$SVC_TMP/log3" --state-dir "$D" --node a=1xA100-40GB --op-delay 0 --preempt --preempt-grace 0
    wait_for check_cluster || fail "backend and view differ after the restart (crash $delay)"
    sb=$(state big)
    n=$(insts_of big)
    # start-up submits what it queues in the queue's order (priority
    # first): the 1g of priority 10 takes the GPU before the 7g of
    # priority 0 could, and a 7g adopted from its still-tagged instance is
    # preempted again within start-up; so the 7g never runs after the
    # restart (in store order it once ran for 0.1 s and was preempted
    # again: stop 27's CI failed on that)
    [ "$sb" = queued ] || fail "big is $sb after the restart (crash $delay): $(curl -s "$B/v1/events?since=0&timeout=0")"
    [ "$n" = 0 ] || fail "big queued but on $n instances (crash $delay)"
    curl -sf "$B/v1/events?since=$last&timeout=0" > "$SVC_TMP/ev" || fail "GET /v1/events (crash $delay)"
    [ "$(jq '[.events[] | select(.job == "big" and (.state == "starting" or .state == "running"))] | length' \
        "$SVC_TMP/ev")" = 0 ] || fail "big ran again after the restart (crash $delay): $(jq -c '.events[]' "$SVC_TMP/ev")"
    # small is never on two instances either; whether it runs now depends
    # on where the kill fell: killed between big's STOP and its DESTROY,
    # the restart keeps big's 7g GI idle in the view, and fa+ does not
    # destroy an idle GI to place a 1g (a cancel killed there does the
    # same; docs/tenants.md, "migschedd": not fixed here)
    [ "$(insts_of small)" -le 1 ] || fail "small on $(insts_of small) instances (crash $delay)"
    echo "crash after ${delay}s: big was $sb after the restart"
    svc_stop
done
echo "test_service_preempt: ok"
