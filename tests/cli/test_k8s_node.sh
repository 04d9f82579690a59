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
exec bash tests/k8s/hook.sh "$0" "k8s node e2e" tests/k8s/test_e2e_node.sh
