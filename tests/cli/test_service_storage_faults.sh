#!/usr/bin/env bash
# A Jepsen-style run of migschedd alone on a damaged disk (issue 20,
# defects 10-12): the state directory on a small tmpfs (mount -t tmpfs -o
# size=...; skipped with 77 where it cannot be mounted). Rounds of:
#  1. concurrent submitters, the disk filled part way (a filler file):
#     every 201 is recorded; while the store cannot write, submissions get
#     503 and /readyz says so; once space returns the view and the backend
#     converge (in_sync) and every recorded job is there;
#  2. kill -9, then the WAL cut (truncated to half) or corrupted: start-up
#     refuses with the reason and changes nothing on the backend; with
#     --recovery adopt it starts, and no instance of the backend was
#     destroyed (every one the backend had is still there and in the view);
#  3. kill -9 and a plain restart: every job acknowledged since is there.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
command -v jq >/dev/null || { echo "jq missing (scripts/deps/service.list)"; exit 1; }
skip() { echo "storage faults: skipped ($*)"; exit 77; }

M=$SVC_TMP/mnt
mkdir -p "$M"
[ "$(id -u)" = 0 ] || skip "not root: cannot mount a tmpfs"
mount -t tmpfs -o size=4m tmpfs "$M" 2>/dev/null || skip "mount -t tmpfs failed (no CAP_SYS_ADMIN?)"
unmount() { umount "$M" 2>/dev/null || true; }
trap 'for p in "${SVC_PIDS[@]}"; do kill -9 "$p" 2>/dev/null; done; unmount; rm -rf "$SVC_TMP"' EXIT
S=$M/state
ARGS=(--state-dir "$S" --backend sim --node a=4xA100-40GB --node b=4xA100-40GB --policy best-fit --op-delay 0)
ACKED=$SVC_TMP/acked
: >"$ACKED"

submit() { # submit ID: record it when acknowledged
    local code
    code=$(curl -s --max-time 60 -o /dev/null -w '%{http_code}' -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" \
        -d "{\"id\":\"$1\",\"profile\":\"1g.5gb\",\"duration_s\":100000}")
    [ "$code" = 201 ] && echo "$1" >>"$ACKED"
    echo "$code"
}
burst() { # burst PREFIX N: 4 concurrent submitters
    local w i ps=()
    for w in 1 2 3 4; do
        (for i in $(seq 1 "$2"); do submit "$1-$w-$i" >/dev/null; done) &
        ps+=($!)
    done
    wait "${ps[@]}"   # (not the daemon)
}
all_acked_there() {
    local id
    while read -r id; do
        curl -sf -o /dev/null "$B/v1/jobs/$id" || { echo "acknowledged job $id is missing"; return 1; }
    done <"$ACKED"
}
backend_instances() { # the sim's inventory: its snapshot and its journal's whole lines replayed
    python3 - "$S/sim-inventory.json" "$S/sim-inventory.journal" <<'EOF'
import json, os, sys
inst = json.load(open(sys.argv[1]))["instances"]
if os.path.exists(sys.argv[2]):
    for line in open(sys.argv[2]).read().split("\n")[:-1]:   # a cut last line never happened
        o = json.loads(line)
        inst = [i for i in inst if i["gpu"] not in o["gpus"]] + o["instances"]
print(json.dumps(sorted([i["gpu"], i["start"], i["prof"], i["job"]] for i in inst)))
EOF
}

svc_start "$SVC_TMP/log" "${ARGS[@]}"
burst r1 5
# 1. the disk full while submitters run
dd if=/dev/zero of="$M/filler" bs=64k 2>/dev/null || true   # fills it
# the first submission's commit fails: its answer is held until a write
# succeeds (it is not reported failed); the store is then known down
submit full-held >"$SVC_TMP/held-code" &
held=$!
wait_for sh -c "curl -s -o /dev/null -w '%{http_code}' $B/readyz | grep -qx 503" ||
    fail "a full disk: /readyz did not turn 503"
codes=$(for i in 1 2 3; do submit "full-$i"; done | sort | uniq -c | tr -s ' \n' ' ')
case $codes in *503*) ;; *) fail "a full disk: submissions answered $codes, want 503" ;; esac
rm -f "$M/filler"
wait "$held"
[ "$(cat "$SVC_TMP/held-code")" = 201 ] || fail "the held submission was answered $(cat "$SVC_TMP/held-code")"
wait_for sh -c "curl -s -o /dev/null -w '%{http_code}' $B/readyz | grep -qx 200" || fail "space returned, not ready"
submit after-full >/dev/null
wait_for check_cluster || fail "space returned: view and backend do not converge"
all_acked_there || fail "after the full disk"
echo "disk full: the held submission answered 201 once space returned, the others$codes; converged; $(wc -l <"$ACKED") acknowledged, all there"

# 2. kill -9, the WAL damaged
for fault in truncate corrupt; do
    burst "w$fault" 3
    wait_for check_cluster || fail "$fault: not in sync before the kill"
    kill -9 "$SVC_PID"; wait "$SVC_PID" 2>/dev/null
    before=$(backend_instances)
    wal=$S/migschedd.db-wal
    [ -s "$wal" ] || fail "$fault: no WAL after kill -9"
    if [ $fault = truncate ]; then
        truncate -s $(( $(stat -c %s "$wal") / 2 )) "$wal"
    else
        printf 'garbage-garbage-garbage' | dd of="$wal" bs=1 seek=$(( $(stat -c %s "$wal") / 2 )) conv=notrunc 2>/dev/null
    fi
    # (a start that goes on runs until the timeout: 124)
    timeout 20 "$MIGSCHEDD" --listen 127.0.0.1:$(free_port) "${ARGS[@]}" 2>"$SVC_TMP/e-$fault"
    rc=$?
    if grep -q 'start-up refused' "$SVC_TMP/e-$fault"; then
        [ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "$fault: refused, but exit status $rc"
        [ "$(backend_instances)" = "$before" ] || fail "$fault: the refusal changed the backend"
        svc_start "$SVC_TMP/log" "${ARGS[@]}" --recovery adopt
        how="refused ($(grep -o 'start-up refused: [^;]*' "$SVC_TMP/e-$fault" | head -c 100)...), then adopted"
    elif [ $rc -eq 124 ] && grep -q '"listening"' "$SVC_TMP/e-$fault"; then
        # the cut cost no acknowledged commit: a plain start, nothing lost
        svc_start "$SVC_TMP/log" "${ARGS[@]}"
        all_acked_there || fail "$fault: started, but acknowledged jobs are missing"
        how="started (no acknowledged commit was cut)"
    else
        fail "$fault: start-up neither refused nor started (status $rc): $(tail -n 3 "$SVC_TMP/e-$fault")"
    fi
    after=$(curl -sf "$B/v1/jobs?state=running&limit=1000" | jq '.jobs | length')
    now=$(backend_instances)
    python3 - "$before" "$now" <<'EOF' || fail "$fault: an instance was destroyed"
import json, sys
b, n = json.loads(sys.argv[1]), json.loads(sys.argv[2])
gone = [i for i in b if i[3] and i not in n]
sys.exit(1 if gone else 0)
EOF
    wait_for check_cluster || fail "$fault: not in sync after the recovery"
    echo "WAL $fault after kill -9: $how; no instance destroyed ($after running in the view)"
    : >"$ACKED"   # the damaged store's acknowledgements are what was lost, by design
done

# 3. kill -9 and a plain restart: nothing acknowledged lost
burst k 4
kill -9 "$SVC_PID"; wait "$SVC_PID" 2>/dev/null
svc_start "$SVC_TMP/log" "${ARGS[@]}"
all_acked_there || fail "after kill -9"
wait_for check_cluster || fail "after kill -9: not in sync"
svc_stop
echo "storage faults: ok"
