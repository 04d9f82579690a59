#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end failover test (tests/k8s/
# test_e2e_failover.sh: two migschedd replicas with --leader-elect, the
# leader killed with SIGKILL during a burst of pods) into the suite. It is
# skipped (exit 77) with "k8s failover e2e: skipped (REASON)" where Go >=
# 1.26 or the module proxy is missing, or MIGSCHED_K8S_SKIP is set.
set -u
cd "$(dirname "$0")/../.."
exec bash tests/k8s/hook.sh "$0" "k8s failover e2e" tests/k8s/test_e2e_failover.sh
