#!/usr/bin/env bash
# Hook of the DRA end-to-end test (tests/k8s/test_e2e_dra.sh: kubelets
# v1.37.2 with containerd and runc, migsched-agent as their DRA driver,
# kube-scheduler's allocator and kube-controller-manager's claim lifecycle)
# into the suite. It exits 77 with "k8s dra e2e: skipped (REASON)" where the
# nodes cannot run (no Go >= 1.26 or module proxy, not root, no runc or
# busybox-static, MIGSCHED_K8S_SKIP set): counted as skipped, not passed.
set -u
cd "$(dirname "$0")/../.."
out=$(bash tests/k8s/test_e2e_dra.sh 2>&1)
rc=$?
printf '%s\n' "$out"
# the one-line verdict on the runner's own output too (as test_k8s_node.sh)
line=$(printf '%s\n' "$out" | grep -E '^k8s dra e2e: ' | tail -n 1)
[ $rc -eq 0 ] || [ $rc -eq 77 ] || line="k8s dra e2e: FAILED (see $(basename "$0").log)"
o=/proc/$PPID/fd/1
if [ -n "$line" ] && { [ -p "$o" ] || [ -c "$o" ]; }; then
    { printf '%s\n' "$line" >>"$o"; } 2>/dev/null || true
fi
exit $rc
