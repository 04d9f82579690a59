#!/usr/bin/env bash
# hook.sh HOOK NAME SCRIPT [ARGS...] - runs one end-to-end script for the
# suite, exec'd by its hook tests/cli/test_k8s_*.sh (HOOK: the hook's $0)
# so that the runner is this process's parent. SCRIPT's output goes to
# stdout, which the runner keeps in HOOK's log; its verdict line (the last
# that starts with "NAME:" or "NAME (") goes to the runner's own output
# too, but only where that is a pipe or a terminal: into a regular file
# the write would race the runner's own offset and could garble its
# closing line. A failure without a verdict says "NAME: FAILED (see
# HOOK.log)". The exit status is SCRIPT's (77: skipped).
set -u
hook=$1 name=$2 script=$3
shift 3
out=$(bash "$script" "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep -E "^$name(:| \\()" | tail -n 1)
[ $rc -eq 0 ] || [ $rc -eq 77 ] || line="$name: FAILED (see $(basename "$hook").log)"
o=/proc/$PPID/fd/1
if [ -n "$line" ] && { [ -p "$o" ] || [ -c "$o" ]; }; then
    { printf '%s\n' "$line" >>"$o"; } 2>/dev/null || true
fi
exit $rc
