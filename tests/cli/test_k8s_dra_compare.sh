#!/usr/bin/env bash
# Hook of the DRA comparison's cheap mode (tests/k8s/compare_dra.sh --ci:
# 24 pods of a seeded stream on one real control plane, placed by
# kube-scheduler's first fit, then by migschedd --dra) into the suite: no
# device or slice held twice by either, every pod allocated by migschedd,
# none of its claims pending while a legal placement existed. The figures
# (waits, FragCost) are printed, not checked. It exits 77 with "dra
# comparison: skipped (REASON)" where the control plane cannot be built (no
# Go >= 1.26 or module proxy, MIGSCHED_K8S_SKIP set): counted as skipped,
# not passed.
set -u
cd "$(dirname "$0")/../.."
B=${BUILD:-build}
export MIGSCHEDD=${MIGSCHEDD:-$B/migschedd} MIGSCHED=${MIGSCHED:-$B/migsched}
exec bash tests/k8s/hook.sh "$0" "dra comparison" tests/k8s/compare_dra.sh --ci
