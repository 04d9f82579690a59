#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end node-layout test (tests/k8s/
# test_e2e_nodecfg.sh: migschedd --k8s-policy --leader-elect switching GPU
# Operator nodes' MIG layouts against a real API server and a fake
# mig-manager) into the suite. It is skipped (exit 77) with "k8s nodecfg e2e: skipped
# (REASON)" where Go >= 1.26 or the module proxy is missing, or
# MIGSCHED_K8S_SKIP is set. The verdict line goes to the runner's output as
# in test_k8s_extender.sh.
set -u
cd "$(dirname "$0")/../.."
out=$(bash tests/k8s/test_e2e_nodecfg.sh 2>&1)
rc=$?
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep -E '^k8s nodecfg e2e: ' | tail -n 1)
[ $rc -eq 0 ] || [ $rc -eq 77 ] || line="k8s nodecfg e2e: FAILED (see $(basename "$0").log)"
o=/proc/$PPID/fd/1
if [ -n "$line" ] && { [ -p "$o" ] || [ -c "$o" ]; }; then
    { printf '%s\n' "$line" >>"$o"; } 2>/dev/null || true
fi
exit $rc
