#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end stale-bind test (tests/k8s/
# test_e2e_stale_bind.sh: a leader frozen before its Binding and continued
# after the standby took over sends none) into the suite. It is
# skipped (exit 77) with "k8s stale bind e2e: skipped (REASON)" where Go >=
# 1.26 or the module proxy is missing, or MIGSCHED_K8S_SKIP is set.
set -u
cd "$(dirname "$0")/../.."
out=$(bash tests/k8s/test_e2e_stale_bind.sh 2>&1)
rc=$?
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep -E '^k8s stale bind e2e: ' | tail -n 1)
[ $rc -eq 0 ] || [ $rc -eq 77 ] || line="k8s stale bind e2e: FAILED (see $(basename "$0").log)"
o=/proc/$PPID/fd/1
if [ -n "$line" ] && { [ -p "$o" ] || [ -c "$o" ]; }; then
    { printf '%s\n' "$line" >>"$o"; } 2>/dev/null || true
fi
exit $rc
