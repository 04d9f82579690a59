#!/usr/bin/env bash
# Hook of the DRA allocator's split-brain test (tests/k8s/test_e2e_dra_split.sh:
# migschedd --dra replicas with leader election on kube-apiserver,
# kube-scheduler and kube-controller-manager v1.37.2; a stale leader frozen
# mid-write and continued after another took over, then the leader killed
# with -9 four times under a stream of pods) into the suite. It exits 77
# with "k8s dra split e2e: skipped (REASON)" where the control plane cannot
# be built (no Go >= 1.26 or module proxy, MIGSCHED_K8S_SKIP set): counted
# as skipped, not passed.
set -u
cd "$(dirname "$0")/../.."
exec bash tests/k8s/hook.sh "$0" "k8s dra split e2e" tests/k8s/test_e2e_dra_split.sh
