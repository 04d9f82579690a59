#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end tenants test (tests/k8s/test_e2e_tenants.sh:
# migschedd --tenant ... --k8s-tenant-label as the extender of a real
# kube-scheduler; a tenant's limit holds its pods Pending while another
# tenant's are bound) into the suite. It is skipped (exit 77) with "k8s tenants e2e: skipped
# (REASON)" where Go >= 1.26 or the module proxy is missing, or
# MIGSCHED_K8S_SKIP is set. The verdict line goes to the runner's output as
# in tests/k8s/hook.sh.
set -u
cd "$(dirname "$0")/../.."
exec bash tests/k8s/hook.sh "$0" "k8s tenants e2e" tests/k8s/test_e2e_tenants.sh
