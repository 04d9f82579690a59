#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end stale-eviction test (tests/k8s/
# test_e2e_stale_evict.sh: a leader frozen before an Eviction and continued
# after the standby took over sends none; the new leader nudges the pods
# the old one turned down, and makes the preemption) into the suite. It is
# skipped (exit 77) with "k8s stale evict e2e: skipped (REASON)" where Go >=
# 1.26 or the module proxy is missing, or MIGSCHED_K8S_SKIP is set.
set -u
cd "$(dirname "$0")/../.."
exec bash tests/k8s/hook.sh "$0" "k8s stale evict e2e" tests/k8s/test_e2e_stale_evict.sh
