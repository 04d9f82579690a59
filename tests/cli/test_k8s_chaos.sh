#!/usr/bin/env bash
# Hook of the Kubernetes chaos test (tests/k8s/test_e2e_chaos.sh: two
# migschedd replicas with leader election, three migsched-agents, bursts of
# pods, random deletes and kill -9 of the leader, the standby and agents,
# MS_CHAOS_ROUNDS rounds, seeded by MS_CHAOS_SEED) into the suite. Exit 77
# (skipped) where Go >= 1.26, the module proxy or the binaries are missing,
# or MIGSCHED_K8S_SKIP is set.
set -u
cd "$(dirname "$0")/../.."
out=$(bash tests/k8s/test_e2e_chaos.sh 2>&1)
rc=$?
printf '%s\n' "$out"
exit $rc
