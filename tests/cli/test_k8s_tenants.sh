#!/usr/bin/env bash
# Hook of the Kubernetes end-to-end tenants test (tests/k8s/test_e2e_tenants.sh:
# migschedd --tenant ... --k8s-tenant-label as the extender of a real
# kube-scheduler; a tenant's limit holds its pods Pending while another
# tenant's are bound) into the suite. It is skipped (exit 77) with "k8s tenants e2e: skipped
# (REASON)" where Go >= 1.26 or the module proxy is missing, or
# MIGSCHED_K8S_SKIP is set. The verdict line goes to the runner's output as
# in test_k8s_extender.sh.
set -u
cd "$(dirname "$0")/../.."
out=$(bash tests/k8s/test_e2e_tenants.sh 2>&1)
rc=$?
printf '%s\n' "$out"
line=$(printf '%s\n' "$out" | grep -E '^k8s tenants e2e: ' | tail -n 1)
[ $rc -eq 0 ] || [ $rc -eq 77 ] || line="k8s tenants e2e: FAILED (see $(basename "$0").log)"
o=/proc/$PPID/fd/1
if [ -n "$line" ] && { [ -p "$o" ] || [ -c "$o" ]; }; then
    { printf '%s\n' "$line" >>"$o"; } 2>/dev/null || true
fi
exit $rc
