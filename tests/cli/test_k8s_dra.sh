#!/usr/bin/env bash
# Hook of the DRA end-to-end test (tests/k8s/test_e2e_dra.sh: kubelets
# v1.37.2 with containerd and runc, migsched-agent as their DRA driver,
# kube-scheduler's allocator and kube-controller-manager's claim lifecycle)
# into the suite. It exits 77 with "k8s dra e2e: skipped (REASON)" where the
# nodes cannot run (no Go >= 1.26 or module proxy, not root, no runc or
# busybox-static, MIGSCHED_K8S_SKIP set): counted as skipped, not passed.
set -u
cd "$(dirname "$0")/../.."
exec bash tests/k8s/hook.sh "$0" "k8s dra e2e" tests/k8s/test_e2e_dra.sh
