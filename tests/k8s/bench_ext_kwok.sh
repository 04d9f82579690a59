#!/usr/bin/env bash
# The extender at scale on KWOK nodes (issue 25, item 5; docs/performance.md,
# "MIG pods bound per second on KWOK nodes"): the real control plane
# (harness.sh, migschedd's URL as the extender of the `migsched` profile),
# KWOK's controller (build-kwok.sh, its default stages) driving NODES fake
# nodes kw00000.. (annotation kwok.x-k8s.io/node=fake), each with one
# A100-40GB's migsched.io resources; migschedd (release build, sim backend)
# as the extender knowing those nodes (--nodes-file), started as
# test_e2e_extender.sh starts it. Then, each on an empty cluster (the pods
# before deleted), PODS plain pods (default-scheduler, cpu 10m), PODS MIG
# pods (migsched profile, the same request and migsched.io/mig-1g.5gb: 1;
# 7 fit a GPU, so PODS <= 7 * NODES) and both kinds at once, created as
# fast as the API server takes them; bench_ext_kwok.py watches the pods and
# prints one JSON line and a table: pods bound per second from the first
# create to the last bind per kind, MIG / plain, creation-to-bound p50/p99,
# how many KWOK made Running, and every MIG pod's migsched.io/placement
# checked unique (and on the pod's node).
#
#   bash tests/k8s/bench_ext_kwok.sh [NODES [PODS]]   (default 1000 1000)
#
# PHASES (default plain,mig,both), WORKERS (API connections creating pods,
# default 8), STALL_S (a phase ends when no pod was bound for that long,
# default 60), KWOK_LEASE_S (node Lease duration, kwokctl's default 40; 0:
# heartbeats by node status every 20-25 s instead), MIGSCHEDD_ARGS (more
# migschedd options), MS_K8S_SCHED_QPS (kube-scheduler's client qps,
# harness.sh; unset: its default 50, burst 100, which paces the bindings it
# posts for plain pods but not migschedd's). A benchmark, not a suite test: it never fails on a
# time (the target, MIG at least 80% of plain, is reported); exit 1 when a
# MIG placement is duplicated or on another node, a create failed, a pod
# was not bound, or a step failed. MS_K8S_KEEP keeps the control plane's
# directory. Exits 77 with "skipped (REASON)" where the control plane or
# kwok cannot be built.
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"
NODES=${1:-1000}
PODS=${2:-1000}
PHASES=${PHASES:-plain,mig,both}
KWOK_LEASE_S=${KWOK_LEASE_S:-40}
skip() { echo "kwok extender benchmark: skipped ($*)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
[ -z "${MIGSCHED_K8S_SKIP:-}" ] || skip "MIGSCHED_K8S_SKIP is set"
for t in curl openssl python3; do command -v "$t" >/dev/null || skip "$t not found"; done
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml missing"
[ "$PODS" -le $((7 * NODES)) ] || fail "PODS ($PODS) > 7 * NODES: not every MIG pod fits"
MIGSCHEDD=${MIGSCHEDD:-$root/build/migschedd}
[ -x "$MIGSCHEDD" ] || fail "no $MIGSCHEDD (make all)"
out=$(bash "$here/build-tools.sh") || { echo "$out"; fail "build-tools.sh failed"; }
ms_k8s_bins_ok || skip "$(echo "$out" | sed -n 's/^skip: //p' | tail -n 1)"
rc=0
out=$(bash "$here/build-kwok.sh") || rc=$?
[ "$rc" -eq 0 ] || [ "$rc" -eq 77 ] || { echo "$out"; fail "build-kwok.sh failed"; }
ms_kwok_bin_ok || skip "$(echo "$out" | sed -n 's/^skip: //p' | tail -n 1)"

D=
MSPID=
KWPID=
trap ms_bench_cleanup EXIT

echo "kwok extender benchmark: $NODES nodes, $PODS pods per kind, phases $PHASES; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
t=$(ms_now)
D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-kwok.XXXXXX")
port=$(ms_free_port)
MS_K8S_EXTENDER_URL=http://127.0.0.1:$port/extender bash "$here/harness.sh" start "$D" >"$D/harness.log" 2>&1 ||
    { tail -n 30 "$D/harness.log" >&2; fail "control plane ($D/harness.log)"; }
. "$D/env"
plane_s=$(ms_since "$t")

# kwok as the admin (it writes node and pod status, Leases), with the
# default stages; pod IPs from a /12 (its default /24 runs out at 254 pods)
t=$(ms_now)
hb=$MS_KWOK_BIN/stages/node-heartbeat-with-lease.yaml
[ "$KWOK_LEASE_S" -gt 0 ] || hb=$MS_KWOK_BIN/stages/node-heartbeat.yaml
cfg=
for f in node-initialize pod-ready pod-complete pod-delete; do cfg="$cfg --config $MS_KWOK_BIN/stages/$f.yaml"; done
# shellcheck disable=SC2086
"$MS_KWOK_BIN/kwok" --kubeconfig "$MS_K8S_KUBECONFIG" --manage-all-nodes=false \
    --manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
    --cidr 10.128.0.0/12 --node-ip 10.127.0.1 --node-lease-duration-seconds "$KWOK_LEASE_S" \
    $cfg --config "$hb" >"$D/kwok.log" 2>&1 </dev/null &
KWPID=$!
sleep 1
kill -0 "$KWPID" 2>/dev/null || { tail -n 20 "$D/kwok.log" >&2; fail "kwok exited ($D/kwok.log)"; }
read -r create_s ready_s nready < <(python3 "$here/bench_ext_kwok.py" nodes "$D" "$NODES" "$D/nodes.txt") ||
    fail "creating the nodes, or kwok did not make them Ready ($D/kwok.log)"
echo "nodes: $NODES created in $create_s s, $nready Ready (kwok) after $ready_s s" >&2
nodes_s=$(ms_since "$t")

# migschedd as test_e2e_extender.sh starts it (lib.sh ms_e2e_extender_up),
# the nodes from a file, and more time for its first lists at this size
t=$(ms_now)
# shellcheck disable=SC2086
"$MIGSCHEDD" --listen "127.0.0.1:$port" --state-dir "$D/migschedd" --backend sim --op-delay 0.001 \
    --nodes-file "$D/nodes.txt" --kube-api "$MS_K8S_API" --kube-token-file "$D/pki/extender.token" \
    --kube-ca "$MS_K8S_CA" --extender-ttl 10 ${MIGSCHEDD_ARGS:-} 2>"$D/migschedd.log" &
MSPID=$!
for i in $(seq 1 600); do
    curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$port/readyz" && break
    kill -0 "$MSPID" 2>/dev/null || { tail -n 20 "$D/migschedd.log" >&2; fail "migschedd exited ($D/migschedd.log)"; }
    sleep 0.5
done
curl -sf -o /dev/null --max-time 5 "http://127.0.0.1:$port/readyz" || fail "migschedd not ready after 300 s"
migschedd_s=$(ms_since "$t")
echo "control plane ${plane_s} s, kwok and nodes ${nodes_s} s, migschedd ready ${migschedd_s} s" >&2

rc=0
python3 "$here/bench_ext_kwok.py" run "$D" "http://127.0.0.1:$port" "$PODS" "$PHASES" \
    "{\"nodes\": $NODES, \"kwok\": \"$MS_KWOK_VERSION\", \"kwok_lease_s\": $KWOK_LEASE_S, \"sched_qps\": \"${MS_K8S_SCHED_QPS:-default}\", \"phases_s\": {\"control_plane\": $plane_s, \"kwok_nodes\": $nodes_s, \"migschedd_ready\": $migschedd_s}}" || rc=$?
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
kill -0 "$KWPID" 2>/dev/null || echo "kwok exited during the run ($D/kwok.log)" >&2
kill -TERM "$MSPID"; wait "$MSPID" || true; MSPID=
[ "$rc" -eq 0 ] || fail "the run failed: a MIG placement duplicated or on another node, a create failed, a pod not bound, or the script itself (above)"
