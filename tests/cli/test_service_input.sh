#!/usr/bin/env bash
# migschedd's own input files (issue 20, defect 17):
#   - --nodes-file FILE, and `nodes-file = FILE` in --config, give the
#     daemon its nodes (before, neither ever worked: the setting was taken
#     for a node spec), adding up with --node;
#   - a --config that cannot be read to its end (a directory: EISDIR, the
#     path an out-of-memory or I/O error takes too) is an error naming the
#     file, never a short file that starts a daemon on defaults;
#   - a NUL in a line of --config or of a nodes file is an error naming the
#     file and line, never a line cut at the NUL (`node = a=1xA100-40GB\0...`
#     made node a).
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
T=$SVC_TMP

# refused WANT_RE ARGS...: migschedd exits non-zero at once with WANT_RE
refused() {
    local want=$1 rc try
    shift
    for try in 1 2 3 4 5 6 7 8; do   # another port if a random one is taken
        timeout 60 "$MIGSCHEDD" --listen 127.0.0.1:$(free_port) "$@" >"$T/out" 2>&1
        rc=$?
        grep -q '"cannot listen"' "$T/out" || break
    done
    [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "migschedd started (or hung: $rc) with: $*"
    grep -Eq -- "$want" "$T/out" || fail "no /$want/ for $*: $(head -c 600 "$T/out")"
}

# --- --nodes-file and nodes-file = work, and add up with --node ---------------
printf '# two nodes\na=2xA100-40GB\n\nb=1xH100-80GB:mig\n' >"$T/nodes"
svc_start "$T/n1.log" --state-dir "$T/n1" --nodes-file "$T/nodes" --node c=1xA100-40GB:timeslice=2
names=$(curl -sf "$B/v1/cluster" | jq -r '[.nodes[].name] | sort | join(",")')
[ "$names" = a,b,c ] || fail "--nodes-file with --node: nodes $names, wanted a,b,c"
svc_stop
printf 'state-dir = %s\nnodes-file = %s\n' "$T/n2" "$T/nodes" >"$T/n.conf"
svc_start "$T/n2.log" --config "$T/n.conf"
names=$(curl -sf "$B/v1/cluster" | jq -r '[.nodes[].name] | sort | join(",")')
[ "$names" = a,b ] || fail "nodes-file = in --config: nodes $names, wanted a,b"
svc_stop

# --- --config that cannot be read, or holds a NUL -----------------------------
mkdir -p "$T/conf.d"
refused "--config $T/conf.d: Is a directory" --config "$T/conf.d" --state-dir "$T/x" --node a=1xA100-40GB
printf 'state-dir = %s\nnode = a=1xA100-40GB\0b=1xA100-40GB\n' "$T/x" >"$T/nul.conf"
refused "$T/nul.conf:2: a NUL byte at column 21" --config "$T/nul.conf"
printf 'state-dir = %s\nnode = a=1xA100-40GB\npolicy = fa\0 # comment\n' "$T/x" >"$T/nul2.conf"
refused "$T/nul2.conf:3: a NUL byte at column 12" --config "$T/nul2.conf"

# --- a nodes file that cannot be read, or holds a NUL ------------------------
printf 'a=1xA100-40GB\nb=1xA100-40GB\0c=1xA100-40GB\n' >"$T/nul.nodes"
refused "$T/nul.nodes:2: .*a NUL byte at column 14" --state-dir "$T/x" --nodes-file "$T/nul.nodes"
printf 'a=1xA100-40GB\0' >"$T/nul-last.nodes"   # at the very end, no newline
refused "$T/nul-last.nodes:1: .*a NUL byte at column 14" --state-dir "$T/x" --nodes-file "$T/nul-last.nodes"
refused "$T/conf.d.*(read error|Is a directory)" --state-dir "$T/x" --nodes-file "$T/conf.d"
refused "$T/missing.*No such file" --state-dir "$T/x" --nodes-file "$T/missing"
# --- "start-up failed (see the log above)" has the reason above it ----------
# (a stored job in a state no migschedd writes: there was nothing above)
svc_start "$T/s1.log" --state-dir "$T/s1" --node a=1xA100-40GB
curl -sf -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" -d '{"id":"j1","profile":"1g"}' ||
    fail "submit j1"
svc_stop
sqlite3 "$T/s1/migschedd.db" "UPDATE jobs SET state='sleeping' WHERE id='j1';" || fail "sqlite3"
refused 'start-up failed' --state-dir "$T/s1" --node a=1xA100-40GB
grep '"a stored job cannot be read"' "$T/out" | grep -q '"id":"j1"' || fail "no reason for the failed start-up: $(cat "$T/out")"
grep -q '"step":"loading the store' "$T/out" || fail "no failed step named: $(cat "$T/out")"
grep -B2 'start-up failed (see the log above)' "$T/out" | grep -q '"level":"error"' ||
    fail "nothing above 'see the log above': $(cat "$T/out")"
echo "PASS: test_service_input"
