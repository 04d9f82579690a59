#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end smoke test (tests/k8s/test_e2e_smoke.sh)
# into the suite: real etcd, kube-apiserver and kube-scheduler built from the
# Go module proxy (cached), the migsched profile's extender, nodes and pods
# as API objects. It is skipped (exit 77) with "k8s e2e: skipped (REASON)" where Go >= 1.26
# or the module proxy is missing, or MIGSCHED_K8S_SKIP is set.
set -u
cd "$(dirname "$0")/../.."
exec bash tests/k8s/hook.sh "$0" "k8s e2e" tests/k8s/test_e2e_smoke.sh
