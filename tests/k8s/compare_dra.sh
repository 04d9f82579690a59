#!/usr/bin/env bash
# The comparison of issue 23 item 3 (docs/dra.md, "The comparison"): the
# same seeded stream of pods with MIG claims (compare_dra.py: arrivals and
# departures, 1g to 7g, three A100-40GB and one H100-80GB node with two GPUs
# each, slices published as NVIDIA's driver publishes them) on the real
# control plane (harness.sh with kube-controller-manager), placed once by
# kube-scheduler's own allocator (first fit) and once by migschedd --dra
# (its webhook, its fence, the ServiceAccount of
# deploy/kubernetes/dra/allocator/rbac.yaml). Prints one JSON line of
# figures per allocator and a Markdown table.
#
#   bash tests/k8s/compare_dra.sh [PODS [SEED]]     (default 60 pods, seed 1)
#   bash tests/k8s/compare_dra.sh --ci [PODS [SEED]] (default 24 pods, seed 1)
#
# --ci, the cheap mode (tests/cli/test_k8s_dra_compare.sh): both runs on one
# control plane (first fit first; its pods and claims cleared before
# migschedd starts), and it checks what must hold whatever the load: no
# device or slice held twice by either allocator, every pod allocated by
# migschedd, none of its claims pending >= 1 s while a legal placement
# existed. Exit 1 with the first that fails. The wait and FragCost figures
# are printed, never checked (they depend on the machine's load).
# MIGSCHEDD_ARGS adds options to migschedd (a mutant: --dra-driver
# mig.migsched.io manages no published device, and --ci must fail).
# MS_CMP_PRIORITY="7g=2000,4g=1000" gives the pods of those sizes a
# PriorityClass of that value (preemptionPolicy Never), in both runs.
# Exits 77 with "skipped (REASON)" where the control plane cannot be built.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
CI=
if [ "${1:-}" = --ci ]; then CI=1; shift; fi
PODS=${1:-${CI:+24}}
PODS=${PODS:-60}
SEED=${2:-1}
skip() { echo "dra comparison: skipped ($*)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -z "${MIGSCHED_K8S_SKIP:-}" ] || skip "MIGSCHED_K8S_SKIP is set"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml missing"
MIGSCHEDD=${MIGSCHEDD:-$root/build/migschedd}
CLI=${MIGSCHED:-$root/build/migsched}
[ -x "$MIGSCHEDD" ] && [ -x "$CLI" ] || fail "no $MIGSCHEDD or $CLI (make all)"
out=$(bash "$here/build-tools.sh") || { echo "$out"; fail "build-tools.sh failed"; }
ms_k8s_bins_ok || skip "$(echo "$out" | sed -n 's/^skip: //p' | tail -n 1)"

D=
MSPID=
STATUS=$(mktemp "${TMPDIR:-/tmp}/migsched-dra-cmp-status.XXXXXX")
cleanup() {
    rm -f "$STATUS"
    [ -z "$MSPID" ] || kill -TERM "$MSPID" 2>/dev/null || true
    [ -z "$D" ] || bash "$here/harness.sh" stop "$D" >/dev/null 2>&1 || true
    [ -z "$D" ] || [ -n "${MS_K8S_KEEP:-}" ] || rm -rf "$D"
}
trap cleanup EXIT

plane() { # a fresh control plane with the cluster (nodes, slices, classes, templates)
    D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-dra-cmp.XXXXXX")
    MS_K8S_KCM=resourceclaim-controller,garbage-collector-controller bash "$here/harness.sh" start "$D" >"$D/harness.log"
    python3 "$here/compare_dra.py" setup "$D" x 0 0 >&2
}
plane_stop() {
    bash "$here/harness.sh" stop "$D" >/dev/null 2>&1 || true
    [ -n "${MS_K8S_KEEP:-}" ] && echo "kept $D" >&2 || rm -rf "$D"
    D=
}
one() { # one firstfit|migsched -> the figures' JSON line on stdout (on the plane in $D)
    if [ "$1" = migsched ]; then
        ms_dra_allocator_up
        port=$MS_DRA_PORT
        for i in $(seq 1 100); do
            curl -sf --max-time 5 --cacert "$MS_K8S_CA" "https://127.0.0.1:$port/dra/status" 2>/dev/null |
                grep -q '"deciding":true' && break
            sleep 0.1
        done
        python3 "$here/dra_alloc_e2e.py" webhook "$D" "https://127.0.0.1:$port" >&2
        sleep 3
    fi
    python3 "$here/compare_dra.py" run "$D" "$CLI" "$PODS" "$SEED"
    if [ -n "$MSPID" ]; then
        curl -sf --max-time 5 --cacert "$MS_K8S_CA" "https://127.0.0.1:$port/dra/status" >"$STATUS" || true
        echo "migschedd /dra/status: $(cat "$STATUS")" >&2
        kill -TERM "$MSPID"; wait "$MSPID" || true; MSPID=
    fi
}
t0=$(date +%s)
if [ -n "$CI" ]; then
    plane
    ff=$(one firstfit)
    python3 "$here/compare_dra.py" clean "$D" x 0 0 >&2 || fail "first fit's pods and claims not cleared"
    ms=$(one migsched)
    plane_stop
else
    plane; ff=$(one firstfit); plane_stop
    plane; ms=$(one migsched); plane_stop
fi
echo "first fit: $ff"
echo "migsched:  $ms"
python3 - "$ff" "$ms" <<'PY'
import json, sys
ff, ms = json.loads(sys.argv[1]), json.loads(sys.argv[2])
rows = [("claims pending >= 1 s while a legal placement existed", "pending_legal"),
        ("claim-seconds pending with free slices but no legal start", "pending_frag_s"),
        ("1g mean wait, s", "wait_1g"), ("2g mean wait, s", "wait_2g"), ("3g mean wait, s", "wait_3g"),
        ("4g mean wait, s", "wait_4g"), ("7g mean wait, s", "wait_7g"), ("all pods, mean wait, s", "wait_all"),
        ("mean FragCost over time", "fragcost"), ("devices or slices held twice", "double"),
        ("pods allocated / submitted", None)]
print("| %d pods | kube-scheduler first fit | migschedd --dra |" % ff["pods"])
print("|---|---:|---:|")
for label, k in rows:
    if k is None:
        print("| %s | %d / %d | %d / %d |" % (label, ff["allocated"], ff["pods"], ms["allocated"], ms["pods"]))
    else:
        print("| %s | %s | %s |" % (label, ff[k], ms[k]))
PY
if [ -n "$CI" ]; then
    python3 - "$ff" "$ms" "$STATUS" <<'PY' || exit 1
import json, sys
ff, ms = json.loads(sys.argv[1]), json.loads(sys.argv[2])
try:
    decided = json.load(open(sys.argv[3]))["counts"]["decisions"]
except (OSError, ValueError, KeyError):
    decided = 0
bad = []
if decided < ms["pods"]:
    bad.append("migschedd decided %d of %d pods (its /dra/status): the run did not compare it" % (decided, ms["pods"]))
if ff["double"] or ms["double"]:
    bad.append("a device or slice held twice (first fit %d, migschedd %d)" % (ff["double"], ms["double"]))
if ms["allocated"] != ms["pods"]:
    bad.append("migschedd allocated %d of %d pods" % (ms["allocated"], ms["pods"]))
if ms["pending_legal"]:
    bad.append("%d of migschedd's claims pending >= 1 s while a legal placement existed" % ms["pending_legal"])
for b in bad:
    print("FAIL: %s" % b)
sys.exit(1 if bad else 0)
PY
    echo "dra comparison (ci, $PODS pods, seed $SEED): passed in $(( $(date +%s) - t0 )) s"
fi
