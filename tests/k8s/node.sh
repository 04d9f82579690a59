#!/usr/bin/env bash
# A real Kubernetes node on this machine for the end-to-end tests: a
# kubelet v1.37.2 (build-tools.sh) with containerd 2.x (build-node.sh) and
# runc (Debian), registered to the control plane of harness.sh.
#
#   node.sh start DIR NAME     DIR: a harness dir (harness.sh start DIR)
#   node.sh exec DIR NAME CMD  run CMD inside the node (its mount namespace)
#   node.sh spawn DIR NAME LOGNAME CMD...   the same in the background, its
#                              output appended to DIR/nodes/NAME/LOGNAME.log, its pid
#                              recorded in DIR/pids (harness.sh stop ends it)
#   node.sh stop DIR NAME      containers, shims, kubelet, containerd
#   node.sh restart-kubelet DIR NAME
#
# Each node lives in DIR/nodes/NAME and in a mount namespace of its own,
# held by a sleeping process, in which the kubelet's hard-coded
# /var/lib/kubelet/device-plugins is a directory of the node (the kubelet
# removes every socket there when it starts: two nodes, or a real kubelet,
# must not share it) and /run/containerd a private tmpfs. containerd, the
# kubelet, the shims, the containers and the node's device plugin (the test
# starts migsched-agent with `spawn`) run inside it; everything else of the
# node is under DIR/nodes/NAME. The kubelet's cgroups are under a root of
# its own (cgroupRoot /migsched-test-<hash>), so pods of two nodes never
# share a cgroup, and are removed by stop.
#
# Settings that this machine needs, each checked here (docs/kubernetes-testing.md):
#   - cgroups v1: failCgroupV1: false (the kubelet refuses v1 otherwise);
#   - restrict_oom_score_adj: a negative oom_score_adj is denied here, and
#     the kubelet asks -998 for sandboxes;
#   - no CNI: pods use hostNetwork (the kubelet starts only those while the
#     runtime's network is not ready);
#   - no registry: one image, made from busybox-static by make_image.py and
#     imported with ctr, is both the pods' image and the sandbox image.
# Exit 77 with "skip: REASON" when the node cannot run here (no root, no
# runc, no busybox-static, no overlayfs, no binaries).
set -eu
. "$(dirname "$0")/lib.sh"

die() { echo "node: $*" >&2; exit 1; }
log() { echo "node: $*"; }
IMAGE=migsched.test/busybox:1

alive() {
    local st
    st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "${st%% *}" != Z ]
}

holder_pid() { awk -v n="$NAME-ns" '$1 == n {print $2}' "$D/pids" 2>/dev/null | tail -n 1; }

in_node() { # in_node CMD...: CMD inside the node's mount namespace
    local h
    h=$(holder_pid)
    [ -n "$h" ] && alive "$h" || die "node $NAME is not running (no namespace holder)"
    nsenter --mount="/proc/$h/ns/mnt" -- "$@"
}

spawn_in() { # spawn_in LOGNAME CMD...: background, pid recorded
    local name=$1 h
    shift
    h=$(holder_pid)
    [ -n "$h" ] || die "node $NAME is not running"
    nsenter --mount="/proc/$h/ns/mnt" -- "$@" >>"$N/$name.log" 2>&1 </dev/null &
    echo "$NAME-$name $!" >>"$D/pids"
    echo $!
}

wait_until() { # wait_until WHAT SECONDS CMD...
    local what=$1 secs=$2 i
    shift 2
    for ((i = 0; i < secs * 5; i++)); do
        "$@" >/dev/null 2>&1 && { log "$what ($((i / 5)) s)"; return 0; }
        sleep 0.2
    done
    die "$what: not within $secs s"
}

cg_root() { echo "migsched-test-$(printf '%s' "$N" | sha1sum | cut -c1-10)"; }

# cgroups v1: the kubelet's root in every hierarchy it uses (cpuset needs
# its cpus and mems copied from the parent before a task may join).
cg_make() {
    local r c
    r=$(cg_root)
    for c in /sys/fs/cgroup/*/; do
        case "$c" in */unified/) continue ;; esac
        mkdir -p "$c$r"
        if [ -f "$c/cpuset.cpus" ]; then
            cat "$c/cpuset.cpus" >"$c$r/cpuset.cpus"
            cat "$c/cpuset.mems" >"$c$r/cpuset.mems"
        fi
    done
}

# Every process left in the node's cgroups (containers), then the cgroups,
# deepest first.
cg_clean() {
    local r c f p
    r=$(cg_root)
    for c in /sys/fs/cgroup/*/; do
        [ -d "$c$r" ] || continue
        for f in $(find "$c$r" -name cgroup.procs 2>/dev/null); do
            for p in $(cat "$f" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
        done
    done
    sleep 0.2
    for c in /sys/fs/cgroup/*/; do
        [ -d "$c$r" ] || continue
        find "$c$r" -depth -type d -exec rmdir {} \; 2>/dev/null || true
    done
}

containerd_config() {
    cat >"$N/containerd.toml" <<EOF
version = 3
root = "$N/containerd/root"
state = "$N/containerd/state"
[grpc]
  address = "$N/containerd.sock"
[ttrpc]
  address = "$N/containerd.sock.ttrpc"
[plugins]
  [plugins.'io.containerd.cri.v1.images']
    snapshotter = "overlayfs"
    [plugins.'io.containerd.cri.v1.images'.pinned_images]
      sandbox = "$IMAGE"
  [plugins.'io.containerd.cri.v1.runtime']
    enable_cdi = true
    cdi_spec_dirs = ["$N/cdi"]
    restrict_oom_score_adj = true
    [plugins.'io.containerd.cri.v1.runtime'.containerd]
      default_runtime_name = "runc"
      [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc]
        runtime_type = "io.containerd.runc.v2"
        [plugins.'io.containerd.cri.v1.runtime'.containerd.runtimes.runc.options]
          BinaryName = "$(command -v runc || echo /usr/sbin/runc)"
          SystemdCgroup = false
    [plugins.'io.containerd.cri.v1.runtime'.cni]
      bin_dirs = ["$N/cni/bin"]
      conf_dir = "$N/cni/conf"
  [plugins.'io.containerd.grpc.v1.cri']
    disable_tcp_service = true
EOF
}

kubelet_config() {
    cat >"$N/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KPORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $HPORT
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
cgroupRoot: /$(cg_root)
cgroupsPerQOS: true
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://$N/containerd.sock
podLogsDir: $N/pod-logs
enforceNodeAllocatable: []
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%", nodefs.inodesFree: "1%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
nodeStatusUpdateFrequency: 4s
serializeImagePulls: false
maxPods: 110
resolvConf: /etc/resolv.conf
EOF
}

# The kubelet sets vm.overcommit_memory=1, vm.panic_on_oom=0, kernel.panic=10,
# kernel.panic_on_oops=1 and two key quotas when it starts (with
# protectKernelDefaults: true it refuses to start on other values instead).
# These are the machine's, not the node's: the host's values are saved
# before the first kubelet starts and put back once it is up and at stop.
SYSCTLS="vm/overcommit_memory vm/panic_on_oom kernel/panic kernel/panic_on_oops kernel/keys/root_maxkeys kernel/keys/root_maxbytes"
sysctl_save() {
    local k
    [ -f "$N/sysctl.host" ] && return 0
    for k in $SYSCTLS; do echo "$k $(cat "/proc/sys/$k")"; done >"$N/sysctl.host"
}
sysctl_restore() {
    local k v
    [ -f "$N/sysctl.host" ] || return 0
    while read -r k v; do
        [ "$(cat "/proc/sys/$k")" = "$v" ] || echo "$v" >"/proc/sys/$k" 2>/dev/null || true
    done <"$N/sysctl.host"
}

kubelet_sock() { stat -c "%i %z" "$N/device-plugins/kubelet.sock" 2>/dev/null || true; }

start_kubelet() {
    local old
    sysctl_save
    old=$(kubelet_sock)
    spawn_in kubelet "$MS_K8S_BIN/kubelet" --config "$N/kubelet.yaml" --kubeconfig "$N/kubelet.kubeconfig" \
        --root-dir "$N/kubelet" --cert-dir "$N/kubelet-pki" --hostname-override "$NAME" \
        --v 2 >/dev/null
    wait_until "kubelet healthy" 60 curl -sf --max-time 2 "http://127.0.0.1:$HPORT/healthz"
    # its device manager starts after its kernel settings: a new kubelet.sock
    wait_until "kubelet's device manager up" 60 bash -c "i=\$(stat -c '%i %z' '$N/device-plugins/kubelet.sock' 2>/dev/null) && [ \"\$i\" != '$old' ]"
    sysctl_restore
}

cmd_start() {
    local why rest p
    why=$(ms_node_skip_reason)
    [ -z "$why" ] || { echo "skip: $why"; exit 77; }
    [ -f "$D/env" ] || die "no $D/env (harness.sh start first)"
    . "$D/env"
    mkdir -p "$N"
    [ -z "$(holder_pid)" ] || die "node $NAME is running already"
    mkdir -p "$N/containerd" "$N/cdi" "$N/cni/bin" "$N/cni/conf" "$N/pod-logs" "$N/kubelet" "$N/device-plugins"
    read -r KPORT HPORT <<<"$(python3 -c 'import socket
ss = [socket.socket() for _ in range(2)]
for s in ss: s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in ss))')"
    # the hard-coded paths exist on the host (empty); the node's own are bound over them
    mkdir -p /var/lib/kubelet/device-plugins /run/containerd
    unshare --mount --propagation private -- bash -c '
        set -e
        mount --bind "$1/device-plugins" /var/lib/kubelet/device-plugins
        mount -t tmpfs -o mode=0711 tmpfs /run/containerd
        exec -a "$1/ns-holder" sleep infinity' node-ns "$N" </dev/null >"$N/ns.log" 2>&1 &
    echo "$NAME-ns $!" >>"$D/pids"
    wait_until "mount namespace" 10 in_node mountpoint -q /var/lib/kubelet/device-plugins
    cg_make
    containerd_config
    p=$(spawn_in containerd "$MS_NODE_BIN/containerd" --config "$N/containerd.toml" --log-level info)
    PATH="$MS_NODE_BIN:$PATH" wait_until "containerd up" 30 in_node "$MS_NODE_BIN/ctr" --address "$N/containerd.sock" version
    [ -f "$N/../image.tar" ] || python3 "$MS_K8S_DIR/make_image.py" /bin/busybox "$IMAGE" "$N/../image.tar"
    in_node "$MS_NODE_BIN/ctr" --address "$N/containerd.sock" -n k8s.io images import --platform linux/amd64 \
        "$N/../image.tar" >"$N/import.log" 2>&1 || { cat "$N/import.log" >&2; die "ctr import failed"; }
    rest=$(sed -n 's/^MS_K8S_API=//p' "$D/env")
    cat >"$N/kubelet.kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: t
  cluster: {server: "$rest", certificate-authority: "$D/pki/ca.crt"}
users:
- name: kubelet
  user: {token: "$(cat "$D/pki/kubelet.token")"}
contexts:
- name: t
  context: {cluster: t, user: kubelet}
current-context: t
EOF
    chmod 600 "$N/kubelet.kubeconfig"
    kubelet_config
    echo "KPORT=$KPORT HPORT=$HPORT" >"$N/ports"
    start_kubelet
    log "$NAME up: kubelet :$KPORT, containerd $N/containerd.sock, CDI $N/cdi, pod-resources $N/kubelet/pod-resources/kubelet.sock"
}

# stop_pid NAME: TERM then KILL the recorded process NAME (last record).
stop_pid() {
    local pid i
    pid=$(awk -v n="$1" '$1 == n {print $2}' "$D/pids" 2>/dev/null | tail -n 1)
    [ -n "$pid" ] || return 0
    if alive "$pid" && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$D"; then
        kill -TERM "$pid" 2>/dev/null || true
        for ((i = 0; i < 50; i++)); do alive "$pid" || break; sleep 0.2; done
        alive "$pid" && kill -KILL "$pid" 2>/dev/null || true
    fi
    grep -v "^$1 $pid\$" "$D/pids" >"$D/pids.n" || true
    mv "$D/pids.n" "$D/pids"
}

cmd_stop() {
    local p name
    [ -d "$N" ] || return 0
    stop_pid "$NAME-kubelet"
    cg_clean
    # the shims outlive containerd by design: ours name our containerd socket
    for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $N/containerd.sock" || true); do
        kill -KILL "$p" 2>/dev/null || true
    done
    # anything else started in the node (the device plugin), then containerd
    for name in $(awk -v n="$NAME-" 'index($1, n) == 1 && $1 != n "ns" && $1 != n "containerd" {print $1}' "$D/pids" | tac); do
        stop_pid "$name"
    done
    stop_pid "$NAME-containerd"
    stop_pid "$NAME-ns"
    cg_clean
    sysctl_restore
    log "$NAME stopped"
}

cmd_restart_kubelet() {
    . "$N/ports"
    stop_pid "$NAME-kubelet"
    start_kubelet
}

verb=${1:-}
D=${2:-}
NAME=${3:-}
[ -n "$D" ] && [ -n "$NAME" ] || die "usage: node.sh start|exec|spawn|stop|restart-kubelet DIR NAME ..."
D=$(cd "$D" && pwd)
N=$D/nodes/$NAME
shift 3
case "$verb" in
    start) cmd_start ;;
    stop) cmd_stop ;;
    restart-kubelet) cmd_restart_kubelet ;;
    exec) in_node "$@" ;;
    spawn) spawn_in "$@" ;;
    *) die "usage: node.sh start|exec|spawn|stop|restart-kubelet DIR NAME ..." ;;
esac
