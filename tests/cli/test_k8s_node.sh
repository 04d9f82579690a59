#!/usr/bin/env bash
# Hook of the real-node end-to-end test (tests/k8s/test_e2e_node.sh: a
# kubelet v1.37.2 with containerd and runc, migsched-agent as its device
# plugin, migschedd as the extender; each pod's container sees exactly its
# MIG instance) into the suite. It exits 77 with "k8s node e2e: skipped
# (REASON)" where the node cannot run (no Go >= 1.26 or module proxy, not
# root, no runc or busybox-static, MIGSCHED_K8S_SKIP set): counted as
# skipped, not passed.
set -u
cd "$(dirname "$0")/../.."
out=$(bash tests/k8s/test_e2e_node.sh 2>&1)
rc=$?
printf '%s\n' "$out"
# the one-line verdict on the runner's own output too, where that is a pipe
# or a terminal (as tests/cli/test_k8s_extender.sh does)
line=$(printf '%s\n' "$out" | grep -E '^k8s node e2e: ' | tail -n 1)
[ $rc -eq 0 ] || [ $rc -eq 77 ] || line="k8s node e2e: FAILED (see $(basename "$0").log)"
o=/proc/$PPID/fd/1
if [ -n "$line" ] && { [ -p "$o" ] || [ -c "$o" ]; }; then
    { printf '%s\n' "$line" >>"$o"; } 2>/dev/null || true
fi
exit $rc
