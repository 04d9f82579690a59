#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end preemption test (tests/k8s/
# test_e2e_preempt.sh: migschedd --preempt as the extender evicts pods of
# lower priority through the Eviction API, PodDisruptionBudgets honoured by
# the real disruption controller and API server) into the suite. It is
# skipped (exit 77) with "k8s preempt e2e: skipped (REASON)" where Go >=
# 1.26 or the module proxy is missing, or MIGSCHED_K8S_SKIP is set. The
# verdict line goes to the runner's output as in test_k8s_extender.sh.
set -u
cd "$(dirname "$0")/../.."
out=$(bash tests/k8s/test_e2e_preempt.sh 2>&1)
rc=$?
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep -E '^k8s preempt e2e: ' | tail -n 1)
[ $rc -eq 0 ] || [ $rc -eq 77 ] || line="k8s preempt e2e: FAILED (see $(basename "$0").log)"
o=/proc/$PPID/fd/1
if [ -n "$line" ] && { [ -p "$o" ] || [ -c "$o" ]; }; then
    { printf '%s\n' "$line" >>"$o"; } 2>/dev/null || true
fi
exit $rc
