#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end node-layout test (tests/k8s/
# test_e2e_nodecfg.sh: migschedd --k8s-policy --leader-elect switching GPU
# Operator nodes' MIG layouts against a real API server and a fake
# mig-manager) into the suite. It is skipped (exit 77) with "k8s nodecfg e2e: skipped
# (REASON)" where Go >= 1.26 or the module proxy is missing, or
# MIGSCHED_K8S_SKIP is set. The verdict line goes to the runner's output as
# in tests/k8s/hook.sh.
set -u
cd "$(dirname "$0")/../.."
exec bash tests/k8s/hook.sh "$0" "k8s nodecfg e2e" tests/k8s/test_e2e_nodecfg.sh
