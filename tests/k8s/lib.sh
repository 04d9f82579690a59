# Shared settings of the Kubernetes test infrastructure (sourced, bash).
# The versions are pinned in tests/k8s/tools/go.mod; these names must match
# it (build-tools.sh checks that they do).
MS_K8S_VERSION=v1.37.2
MS_ETCD_VERSION=v3.7.0
MS_GO_MIN=1.26
MS_K8S_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
MS_K8S_CACHE=${MIGSCHED_K8S_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/migsched-k8s}
MS_K8S_BIN=$MS_K8S_CACHE/$MS_K8S_VERSION/bin

# ms_k8s_go: prints the path of a go command, or nothing. MIGSCHED_K8S_GO
# names one (set but empty: none, for testing the skip).
ms_k8s_go() {
    if [ -n "${MIGSCHED_K8S_GO+set}" ]; then
        [ -z "$MIGSCHED_K8S_GO" ] || echo "$MIGSCHED_K8S_GO"
    elif command -v go >/dev/null 2>&1; then command -v go
    elif [ -x /usr/local/go/bin/go ]; then echo /usr/local/go/bin/go
    fi
}

# ms_k8s_go_ok GO: true when GO is at least MS_GO_MIN; prints its version.
ms_k8s_go_ok() {
    local v maj min
    v=$("$1" env GOVERSION 2>/dev/null) || return 1
    echo "$v"
    v=${v#go}
    maj=${v%%.*}; min=${v#*.}; min=${min%%.*}; min=${min%%[!0-9]*}
    [ -n "$maj" ] && [ -n "$min" ] || return 1
    [ "$maj" -gt "${MS_GO_MIN%%.*}" ] ||
        { [ "$maj" -eq "${MS_GO_MIN%%.*}" ] && [ "$min" -ge "${MS_GO_MIN#*.}" ]; }
}

# ms_k8s_bins_ok: true when the cached binaries exist and report the pinned
# versions (the binaries themselves are asked, not a stamp file).
ms_k8s_bins_ok() {
    local b
    for b in etcd kube-apiserver kube-scheduler kube-controller-manager kubelet; do
        [ -x "$MS_K8S_BIN/$b" ] || return 1
    done
    "$MS_K8S_BIN/kube-apiserver" --version 2>/dev/null | grep -qx "Kubernetes $MS_K8S_VERSION" || return 1
    "$MS_K8S_BIN/kube-scheduler" --version 2>/dev/null | grep -qx "Kubernetes $MS_K8S_VERSION" || return 1
    "$MS_K8S_BIN/kube-controller-manager" --version 2>/dev/null | grep -qx "Kubernetes $MS_K8S_VERSION" || return 1
    "$MS_K8S_BIN/kubelet" --version 2>/dev/null | grep -qx "Kubernetes $MS_K8S_VERSION" || return 1
    "$MS_K8S_BIN/etcd" --version 2>/dev/null | grep -qx "etcd Version: ${MS_ETCD_VERSION#v}" || return 1
}

# The test nodes' container runtime (build-node.sh, node.sh): containerd
# from its Go module, runc and busybox from Debian.
MS_CONTAINERD_VERSION=v2.4.2
MS_NODE_BIN=$MS_K8S_CACHE/containerd-$MS_CONTAINERD_VERSION/bin

# ms_node_bins_ok: the cached containerd binaries report the pinned version.
ms_node_bins_ok() {
    local b
    for b in containerd containerd-shim-runc-v2 ctr; do
        [ -x "$MS_NODE_BIN/$b" ] || return 1
    done
    "$MS_NODE_BIN/containerd" --version 2>/dev/null | grep -q " $MS_CONTAINERD_VERSION " || return 1
}

# ms_node_skip_reason: empty when a test node (node.sh) can run on this
# machine, else why not.
ms_node_skip_reason() {
    [ "$(id -u)" = 0 ] || { echo "a node needs root"; return; }
    command -v runc >/dev/null || { echo "no runc (apt-get install runc)"; return; }
    # busybox-static's /bin/busybox has no program interpreter (ld-linux)
    [ -x /bin/busybox ] && ! head -c 4096 /bin/busybox | grep -qa 'ld-linux' ||
        { echo "no static /bin/busybox (apt-get install busybox-static)"; return; }
    grep -qw overlay /proc/filesystems || { echo "no overlayfs in this kernel"; return; }
    command -v unshare >/dev/null && command -v nsenter >/dev/null || { echo "no unshare/nsenter (util-linux)"; return; }
    [ -d /sys/fs/cgroup/memory ] || { echo "no cgroup v1 memory hierarchy (the node is set up for cgroups v1)"; return; }
    ms_k8s_bins_ok || { echo "no Kubernetes $MS_K8S_VERSION binaries (build-tools.sh)"; return; }
    ms_node_bins_ok || { echo "no containerd $MS_CONTAINERD_VERSION binaries (build-node.sh)"; return; }
}

# KWOK (build-kwok.sh): fake nodes and pods for the scale benchmark
# (bench_ext_kwok.sh), from its own Go module.
MS_KWOK_VERSION=v0.8.0
MS_KWOK_BIN=$MS_K8S_CACHE/kwok-$MS_KWOK_VERSION/bin

# ms_kwok_bin_ok: the cached kwok reports the pinned version (and its
# default stages are next to it).
ms_kwok_bin_ok() {
    [ -x "$MS_KWOK_BIN/kwok" ] && [ -f "$MS_KWOK_BIN/stages/pod-ready.yaml" ] || return 1
    "$MS_KWOK_BIN/kwok" --version 2>/dev/null | grep -q "${MS_KWOK_VERSION#v}" || return 1
}

# --- the start every end-to-end test shares ------------------------------
# ms_e2e_begin NAME [yaml] defines skip (prints "k8s NAME e2e: skipped
# (WHY)" and exits 77, which the suite counts as skipped) and fail ("FAIL:
# WHY", exit 1), then skips when MIGSCHED_K8S_SKIP is set or curl, openssl,
# python3 or, with "yaml", python3-yaml is missing. Then a test checks its
# own binaries (ms_e2e_pick NAME), builds the control plane with
# ms_e2e_tools [show] ("show" prints what build-tools.sh said) and, for a
# real node, containerd with ms_e2e_node. Sourcing this file defines no
# skip or fail: scripts that source it for the versions keep their own.
ms_e2e_begin() {
    local t
    MS_E2E_NAME=$1
    skip() { echo "k8s ${MS_E2E_NAME:+$MS_E2E_NAME }e2e: skipped ($*)"; exit 77; }
    fail() { echo "FAIL: $*"; exit 1; }
    [ -z "${MIGSCHED_K8S_SKIP:-}" ] || skip "MIGSCHED_K8S_SKIP is set"
    for t in curl openssl python3; do command -v "$t" >/dev/null || skip "$t not found"; done
    if [ "${2:-}" = yaml ]; then
        python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml missing"
    fi
    return 0
}

# ms_e2e_pick NAME: the ASan build's binary when there is one, else build/'s.
ms_e2e_pick() {
    local root=${MS_K8S_DIR%/tests/k8s}
    if [ -x "$root/build-asan/$1" ]; then echo "$root/build-asan/$1"; else echo "$root/build/$1"; fi
}

# ms_e2e_bin VAR NAME: VAR as the environment sets it, else this tree's
# NAME (ms_e2e_pick); fails (after ms_e2e_begin) unless it is executable.
ms_e2e_bin() {
    local v=${!1:-}
    [ -n "$v" ] || v=$(ms_e2e_pick "$2")
    [ -x "$v" ] || fail "no $2 at $v (make all)"
    # absolute: the node and DRA tests start it from other directories
    # (a relative AGENT=build/migsched-agent failed there)
    case $v in /*) ;; *) v=$(cd "$(dirname "$v")" && pwd)/$(basename "$v") ;; esac
    printf -v "$1" '%s' "$v"
}

ms_e2e_tools() {
    local out
    out=$(bash "$MS_K8S_DIR/build-tools.sh") || { echo "$out"; fail "build-tools.sh failed"; }
    [ "${1:-}" != show ] || echo "$out"
    ms_k8s_bins_ok || skip "$(echo "$out" | sed -n 's/^skip: //p' | tail -n 1)"
}

ms_e2e_node() {
    local out why
    out=$(bash "$MS_K8S_DIR/build-node.sh") || { echo "$out"; fail "build-node.sh failed"; }
    ms_node_bins_ok || skip "$(echo "$out" | sed -n 's/^skip: //p' | tail -n 1)"
    why=$(ms_node_skip_reason)
    [ -z "$why" ] || skip "$why"
}

# ms_dra_allocator_identity D: what `migschedd --dra` needs on the plane
# harness.sh started in D: a serving certificate from the harness's CA
# (D/pki/migschedd.crt and .key, for 127.0.0.1: the webhook's caBundle is
# that CA) and a token (D/migschedd.token) for the ServiceAccount and
# ClusterRole of deploy/kubernetes/dra/allocator/rbac.yaml, from
# TokenRequest. Calls fail (the caller's) when either cannot be made.
ms_dra_allocator_identity() {
    local d=$1
    ( cd "$d/pki"
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=migschedd" \
          -keyout migschedd.key -out migschedd.csr
      printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >migschedd.ext
      openssl x509 -req -in migschedd.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
          -extfile migschedd.ext -out migschedd.crt ) >"$d/migschedd-pki.log" 2>&1 || fail "openssl failed"
    python3 "$MS_K8S_DIR/dra_alloc_e2e.py" identity "$d" "${MS_K8S_DIR%/tests/k8s}/deploy/kubernetes/dra/allocator/rbac.yaml" \
        >"$d/migschedd.token" || fail "migschedd's RBAC or token"
}

# ms_dra_allocator_up: migschedd --dra ($MIGSCHEDD, with MIGSCHEDD_ARGS)
# on the harness in $D, with ms_dra_allocator_identity's certificate and
# token, listening on a free port (MS_DRA_PORT); its pid in MSPID. The
# caller waits in /dra/status for what it needs.
ms_dra_allocator_up() {
    ms_dra_allocator_identity "$D"
    MS_DRA_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    . "$D/env"
    "$MIGSCHEDD" --dra --kube-api "$MS_K8S_API" --kube-ca "$MS_K8S_CA" --kube-token-file "$D/migschedd.token" \
        --listen "127.0.0.1:$MS_DRA_PORT" --tls-cert "$D/pki/migschedd.crt" --tls-key "$D/pki/migschedd.key" \
        ${MIGSCHEDD_ARGS:-} 2>"$D/migschedd.log" &
    MSPID=$!
}

# The DRA allocator's replicas with leader election (test_e2e_dra_failover.sh,
# test_e2e_dra_split.sh), on the harness in $D after ms_dra_allocator_identity
# and `. "$D/env"`. ms_free_port: a free TCP port of 127.0.0.1.
# ms_dra_replica NAME PORT [ENV=VALUE]: migschedd --dra ($MIGSCHEDD) as
# POD_NAME migschedd-dra-NAME (its annotation on the claims it writes),
# --leader-elect on the Lease migsched/migschedd-dra (4 s), listening on
# PORT with the harness's certificate, its log appended to
# D/migschedd-NAME.log; its pid in pid_NAME. ms_dra_st PORT: its
# /dra/status (fails while it does not answer).
ms_free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
ms_dra_replica() {
    env ${3:-} POD_NAME=migschedd-dra-$1 "$MIGSCHEDD" --dra --kube-api "$MS_K8S_API" --kube-ca "$MS_K8S_CA" \
        --kube-token-file "$D/migschedd.token" --leader-elect --lease migsched/migschedd-dra --lease-duration 4 \
        --listen "127.0.0.1:$2" --tls-cert "$D/pki/migschedd.crt" --tls-key "$D/pki/migschedd.key" \
        2>>"$D/migschedd-$1.log" &
    eval "pid_$1=$!"
}
ms_dra_st() { curl -sf --max-time 5 --cacert "$MS_K8S_CA" "https://127.0.0.1:$1/dra/status"; }

# The benchmarks' shared steps (bench_dra_scale.sh, bench_ext_kwok.sh).
# ms_bench_cleanup, their EXIT trap: migschedd ($MSPID) and kwok ($KWPID)
# stopped where set, the harness in $D stopped and its directory removed
# (kept, and said, with MS_K8S_KEEP). ms_now: the wall clock in seconds;
# ms_since T: seconds since T (one decimal).
ms_bench_cleanup() {
    [ -z "${MSPID:-}" ] || kill -TERM "$MSPID" 2>/dev/null || true
    [ -z "${KWPID:-}" ] || kill -TERM "$KWPID" 2>/dev/null || true
    [ -z "${D:-}" ] || bash "$MS_K8S_DIR/harness.sh" stop "$D" >/dev/null 2>&1 || true
    if [ -n "${D:-}" ]; then
        [ -n "${MS_K8S_KEEP:-}" ] && echo "kept $D" >&2 || rm -rf "$D"
    fi
}
ms_now() { date +%s.%N; }

# ms_e2e_finish RC DIR "PIDS" "LOGS": a test's end on harness.sh's plane in
# DIR: each of PIDS continued (a test may have frozen one) and ended, the
# plane stopped, the tails of DIR/LOG.log for each of LOGS printed when RC
# is not 0, DIR removed unless MS_K8S_KEEP is set.
ms_e2e_finish() {
    local rc=$1 dir=$2 p f
    for p in $3; do { kill -CONT "$p"; kill -TERM "$p"; } 2>/dev/null || true; done
    wait 2>/dev/null || true
    bash "$MS_K8S_DIR/harness.sh" stop "$dir" || true
    if [ "$rc" -ne 0 ]; then
        for f in $4; do echo "--- $f.log (tail)"; tail -n 25 "$dir/$f.log" 2>/dev/null || true; done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $dir"; else rm -rf "$dir"; fi
}
ms_since() { python3 -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))' "$1" "$(ms_now)"; }

# The extender end-to-end tests' shared steps (test_e2e_extender,
# test_e2e_tenants, test_e2e_preempt), after `. "$D/env"`:
# ms_e2e_extender_up PORT ARGS...: migschedd ($MIGSCHEDD, sim backend) as
# the extender of the harness in $D, with the harness's least-privilege
# identity and ARGS (nodes, options); its pid in MSPID; fails the test if
# its /readyz does not answer within 10 s.
ms_e2e_extender_up() {
    local port=$1 i
    shift
    "$MIGSCHEDD" --listen "127.0.0.1:$port" --state-dir "$D/migschedd" --backend sim --op-delay 0.001 "$@" \
        --kube-api "${MS_E2E_KUBE_API:-$MS_K8S_API}" --kube-token-file "$D/pki/extender.token" --kube-ca "$MS_K8S_CA" \
        --extender-ttl 10 2>"$D/migschedd.log" &
    MSPID=$!
    for i in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && return 0; sleep 0.1; done
    fail "migschedd did not come up"
}

# ms_e2e_fault_proxy ARGS...: api_fault_proxy.py (ARGS: its faults) in
# front of the harness's API server, its log $D/proxy.log, its pid PXPID
# (the caller's cleanup kills it); MS_E2E_KUBE_API points
# ms_e2e_extender_up's migschedd at it. Fails the test if it does not
# listen within 5 s.
ms_e2e_fault_proxy() {
    local pport i
    pport=$(ms_free_port)
    python3 "$MS_K8S_DIR/api_fault_proxy.py" --listen "$pport" --api "$MS_K8S_API" --ca "$MS_K8S_CA" "$@" \
        >"$D/proxy.log" 2>&1 &
    PXPID=$!
    for i in $(seq 1 50); do grep -q listening "$D/proxy.log" && break; sleep 0.1; done
    grep -q listening "$D/proxy.log" || fail "api_fault_proxy.py did not start: $(cat "$D/proxy.log")"
    MS_E2E_KUBE_API=http://127.0.0.1:$pport
}

# ms_e2e_fake_node NAME [RES=N | label:KEY=VALUE ...]: a Ready Node object
# with no kubelet behind it (cpu 64, memory 256Gi, 250 pods, label
# kubernetes.io/hostname and each label:) whose capacity and allocatable
# hold each RES (mig-1g.5gb=14, gpu-share=8: migsched.io/RES; a name with a
# slash as it is: nvidia.com/mig-1g.5gb=56), as the harness's admin.
ms_e2e_fake_node() {
    local name=$1 res='"cpu":"64","memory":"256Gi","pods":"250"' labels r now
    shift
    now=$(date -u +%Y-%m-%dT%H:%M:%SZ)
    labels="\"kubernetes.io/hostname\":\"$name\""
    for r in "$@"; do
        case $r in
        label:*) r=${r#label:}; labels="$labels,\"${r%%=*}\":\"${r#*=}\"" ;;
        */*) res="$res,\"${r%%=*}\":\"${r#*=}\"" ;;
        *) res="$res,\"migsched.io/${r%%=*}\":\"${r#*=}\"" ;;
        esac
    done
    ms_e2e_api POST /api/v1/nodes "{\"apiVersion\":\"v1\",\"kind\":\"Node\",
      \"metadata\":{\"name\":\"$name\",\"labels\":{$labels}},
      \"status\":{\"capacity\":{$res},\"allocatable\":{$res},
        \"conditions\":[{\"type\":\"Ready\",\"status\":\"True\",\"reason\":\"KubeletReady\",
          \"message\":\"API object only, no kubelet\",\"lastHeartbeatTime\":\"$now\",\"lastTransitionTime\":\"$now\"}]}}" >/dev/null
}

# ms_e2e_logged NAME MSG [KEY=VALUE | KEY]: of replica NAME's log
# ($D/migschedd-NAME.log, JSON lines), the number of lines whose msg is MSG
# (and whose KEY is VALUE); with a bare KEY, each such line's KEY instead.
ms_e2e_logged() {
    python3 - "$D/migschedd-$1.log" "$2" "${3:-}" <<'PY'
import json, sys
path, msg, sel = sys.argv[1:4]
key, _, want = sel.partition("=")
n = 0
for line in open(path):
    try:
        o = json.loads(line)
    except ValueError:
        continue
    if o.get("msg") != msg:
        continue
    if key and not _:
        print(o.get(key, "-"))
    elif not key or str(o.get(key)) == want:
        n += 1
if not key or _:
    print(n)
PY
}

# The stale-leader tests of the extender (test_e2e_stale_bind.sh,
# test_e2e_stale_evict.sh): two replicas behind the readiness-routing
# stand-in for a Service. ms_e2e_proxied_plane: the control plane in $D
# whose extender is the proxy, started; the ports in pe (proxy), pa and pb
# (replicas a and b), the proxy's pid in pid_px.
ms_e2e_proxied_plane() {
    pe=$(ms_free_port) pa=$(ms_free_port) pb=$(ms_free_port)
    MS_K8S_EXTENDER_URL=http://127.0.0.1:$pe/extender bash "$MS_K8S_DIR/harness.sh" start "$D" >/dev/null
    . "$D/env"
    python3 "$MS_K8S_DIR/leader_proxy.py" --listen "$pe" --backend "$pa" --backend "$pb" >"$D/proxy.log" 2>&1 &
    pid_px=$!
}
# ms_e2e_replica NAME PORT [ENV=VALUE...] [-- OPTION...]: a replica on
# PORT (sim backend, node-0 of one A100-40GB, the harness's extender
# identity, --leader-elect on the Lease migsched/migschedd of 4 s, and each
# OPTION) with ENV; its log $D/migschedd-NAME.log, its pid in pid_NAME.
ms_e2e_replica() {
    local name=$1 port=$2 envs=()
    shift 2
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
    [ $# -eq 0 ] || shift
    env POD_NAME="migschedd-$name" "${envs[@]}" "$MIGSCHEDD" --listen "127.0.0.1:$port" --state-dir "$D/state-$name" \
        --backend sim --op-delay 0.001 --node node-0=1xA100-40GB --kube-api "$MS_K8S_API" \
        --kube-token-file "$D/pki/extender.token" --kube-ca "$MS_K8S_CA" --extender-ttl 10 \
        --leader-elect --lease migsched/migschedd --lease-duration 4 "$@" 2>"$D/migschedd-$name.log" &
    eval "pid_$name=$!"
}
ms_e2e_ready() { curl -s -o /dev/null -w '%{http_code}' --max-time 2 "http://127.0.0.1:$1/readyz" || true; }
# ms_e2e_leader_and_standby ENV=VALUE [-- OPTION...]: replica a (with
# ENV, its failpoint) on pa until it leads, then b on pb, a standby (its
# /readyz 503); both with each OPTION.
ms_e2e_leader_and_standby() {
    local fail=$1 i
    shift
    ms_e2e_replica a "$pa" "$fail" "$@"
    for i in $(seq 1 100); do [ "$(ms_e2e_ready "$pa")" = 200 ] && break; sleep 0.2; done
    [ "$(ms_e2e_ready "$pa")" = 200 ] || fail "replica a never became the leader"
    ms_e2e_replica b "$pb" "$@"
    for i in $(seq 1 50); do curl -s -o /dev/null "http://127.0.0.1:$pb/healthz" && break; sleep 0.1; done
    [ "$(ms_e2e_ready "$pb")" = 503 ] || fail "the standby's /readyz is $(ms_e2e_ready "$pb"), want 503"
}

# ms_e2e_gpu_operator "NODE..." [ARGS...]: the node layout tests' GPU
# Operator cluster: each NODE a fake node of 8 A100-40GB in inference-peak
# (7 x 1g.5gb a GPU), the cluster policy naming them in $D/policy.yaml,
# `$MIGSCHED k8s-config`'s mig-parted config of it in $D/kc, its layouts
# read into $D/layouts.json (layout -> profile -> count a GPU), and the
# fake mig-manager (fake_mig_manager.py, ARGS: its options, e.g. --fail
# NODE:LAYOUT) in the background against the harness, logging to
# $D/mig.jsonl; its pid in MIGMGR_PID.
ms_e2e_gpu_operator() {
    local nodes=$1 layouts=$D/layouts.json n
    shift
    printf '%s\n' "version: v1" "switching:" "  layouts: [inference-peak, balanced, training]" \
        "  hysteresis: 0" "nodes:" >"$D/policy.yaml"
    for n in $nodes; do
        ms_e2e_fake_node "$n" nvidia.com/mig-1g.5gb=56 label:nvidia.com/gpu.count=8 \
            label:nvidia.com/mig.config=inference-peak label:nvidia.com/mig.config.state=success
        echo "  - {name: $n, model: A100-40GB, gpus: 8, layout: inference-peak}" >>"$D/policy.yaml"
    done
    "$MIGSCHED" k8s-config --policy "$D/policy.yaml" --out "$D/kc" >/dev/null ||
        fail "k8s-config could not write the mig-parted config"
    python3 - "$D/kc/mig-parted.yaml" "$layouts" <<'EOF' || fail "the mig-parted config has no layouts the fake can read"
import json, sys, re
# a tiny reader of the generated mig-parted config, enough for the fake
text = open(sys.argv[1]).read()
out, cur = {}, None
for line in text.splitlines():
    m = re.match(r'^  ([A-Za-z0-9_.-]+):\s*$', line)
    if m:
        cur = m.group(1); out[cur] = {}; continue
    m = re.match(r'^\s+"?([0-9]+g\.[0-9a-z.+]+)"?:\s*([0-9]+)\s*$', line)
    if m and cur:
        out[cur][m.group(1)] = max(out[cur].get(m.group(1), 0), int(m.group(2)))
json.dump(out, open(sys.argv[2], "w"))
assert "training" in out and out["training"], out
EOF
    python3 "$MS_K8S_DIR/fake_mig_manager.py" --api "$MS_K8S_API" --token "$MS_K8S_TOKEN" --ca "$MS_K8S_CA" \
        --layouts "$layouts" --log "$D/mig.jsonl" "$@" >"$D/mig-manager.log" 2>&1 &
    MIGMGR_PID=$!
}

# api METHOD PATH [BODY [CONTENT-TYPE]]: a request as the harness's admin.
ms_e2e_api() {
    curl -sS --max-time 30 --fail-with-body --cacert "$MS_K8S_CA" -H "Authorization: Bearer $MS_K8S_TOKEN" \
        -H "Content-Type: ${4:-application/json}" -X "$1" "$MS_K8S_API$2" ${3:+--data-binary "$3"}
}
