#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end failover test (tests/k8s/
# test_e2e_failover.sh: two migschedd replicas with --leader-elect, the
# leader killed with SIGKILL during a burst of pods) into the suite. It is
# skipped (exit 77) with "k8s failover e2e: skipped (REASON)" where Go >=
# 1.26 or the module proxy is missing, or MIGSCHED_K8S_SKIP is set.
set -u
cd "$(dirname "$0")/../.."
out=$(bash tests/k8s/test_e2e_failover.sh 2>&1)
rc=$?
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep -E '^k8s failover e2e: ' | tail -n 1)
[ $rc -eq 0 ] || [ $rc -eq 77 ] || line="k8s failover e2e: FAILED (see $(basename "$0").log)"
o=/proc/$PPID/fd/1
if [ -n "$line" ] && { [ -p "$o" ] || [ -c "$o" ]; }; then
    { printf '%s\n' "$line" >>"$o"; } 2>/dev/null || true
fi
exit $rc
