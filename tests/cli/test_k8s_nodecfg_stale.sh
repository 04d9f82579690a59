#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end nodecfg stale test (tests/k8s/
# test_e2e_nodecfg_stale.sh: a leader frozen before a node write and continued
# after the standby took over sends nothing) into the suite. It is
# skipped (exit 77) with "k8s nodecfg stale e2e: skipped (REASON)" where Go >=
# 1.26 or the module proxy is missing, or MIGSCHED_K8S_SKIP is set.
set -u
cd "$(dirname "$0")/../.."
exec bash tests/k8s/hook.sh "$0" "k8s nodecfg stale e2e" tests/k8s/test_e2e_nodecfg_stale.sh
