#!/usr/bin/env bash
# End to end on real nodes: a pod's container gets the GPU instance
# migschedd bound it to, through the kubelet's device-plugin API.
#
# The control plane of harness.sh (kube-scheduler with the `migsched`
# profile, managedResources with ignoredByScheduler: false) and three real
# nodes (node.sh: kubelet v1.37.2, containerd 2.x, runc), each with its
# migsched-agent (sim backend, the fake driver's device nodes under
# --dev-root) serving the kubelet device plugin; migschedd --backend agent
# is the extender. Pods run the busybox image and print what they see.
# Checked from inside the containers (what they print, in their CRI log
# files on the node; the API server would fetch them from the kubelet at
# the node's own address, which these tests never contact):
#  - MIG node (1 x A100-40GB): a 3g.20gb pod reaches Running with
#    NVIDIA_VISIBLE_DEVICES = its annotated instance and the GPU's device
#    nodes (mounted through CDI); a second gets the other instance; a third
#    waits; deleting the first frees its room and the third gets it;
#  - the kubelet restarted: the agent registers again, running pods keep
#    their containers, a new pod gets its instance;
#  - the agent killed (-9) and restarted: the same;
#  - a pod that migschedd did not bind (spec.nodeName set by hand) never
#    runs: PreStartContainer refuses it, the runtime never creates it;
#  - the device plugin gone: the node's resources go to 0 and a new pod
#    stays Pending (the kubelet's accounting, seen by kube-scheduler);
#  - time-sliced node (1 GPU x 2): two gpu-share pods share its GPU uuid;
#  - whole-GPU node: a pod gets the whole GPU.
# Prints "k8s node e2e: passed in N s", or "... skipped (REASON)" and exits
# 77 when the node cannot run here (no Go, no root, no runc, ...) or
# MIGSCHED_K8S_SKIP is set. MS_K8S_KEEP=1 keeps DIR (every log).
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

ms_e2e_begin "node"
ms_e2e_bin MIGSCHEDD migschedd
ms_e2e_bin AGENT migsched-agent

ms_e2e_tools
ms_e2e_node

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-node.XXXXXX")
MSPID=
cleanup() {
    rc=$?
    if [ -n "$MSPID" ]; then kill -TERM "$MSPID" 2>/dev/null || true; wait "$MSPID" 2>/dev/null || true; fi
    bash "$here/harness.sh" stop "$D" >/dev/null 2>&1 || true
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
        for f in migschedd.log nodes/mig/kubelet.log nodes/mig/agent.log nodes/mig/containerd.log; do
            echo "--- $f (tail)"; tail -n 25 "$D/$f" 2>/dev/null || true
        done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
port=$(ms_free_port)
MS_K8S_EXTENDER_URL=http://127.0.0.1:$port/extender MS_K8S_IGNORED_BY_SCHEDULER=false \
    bash "$here/harness.sh" start "$D" >"$D/harness.log"
. "$D/env"

# nodes: NAME SPEC
NODES="mig=1xA100-40GB whole=1xA100-40GB:whole ts=1xA100-40GB:timeslice=2"
declare -A APORT
agent_start() { # agent_start NODE
    local n=$1 spec= x N=$D/nodes/$1
    for x in $NODES; do [ "${x%%=*}" != "$n" ] || spec=${x#*=}; done
    bash "$here/node.sh" spawn "$D" "$n" agent "$AGENT" --backend sim --node-spec "$spec" --node-name "$n" \
        --listen "127.0.0.1:${APORT[$n]}" --state-dir "$N/agent" --cdi-dir "$N/cdi" --dev-root "$N/fakedrv" \
        --device-plugin-dir /var/lib/kubelet/device-plugins \
        --pod-resources-socket "$N/kubelet/pod-resources/kubelet.sock" \
        --kube-api "$MS_K8S_API" --kube-token-file "$MS_K8S_AGENT_TOKEN_FILE" --kube-ca "$MS_K8S_CA" >/dev/null
    for i in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:${APORT[$n]}/healthz" && return 0; sleep 0.1; done
    fail "agent of $n did not come up"
}
MSNODES=
for x in $NODES; do
    n=${x%%=*}
    bash "$here/node.sh" start "$D" "$n" >>"$D/nodes.log" 2>&1 || { tail -n 20 "$D/nodes.log"; fail "node $n did not start"; }
    # the fake driver's device nodes (NVIDIA's char majors; no driver behind them)
    f=$D/nodes/$n/fakedrv/dev
    mkdir -p "$f"
    mknod "$f/nvidia0" c 195 0; mknod "$f/nvidiactl" c 195 255
    mknod "$f/nvidia-uvm" c 511 0; mknod "$f/nvidia-uvm-tools" c 511 1
    APORT[$n]=$(ms_free_port)
    agent_start "$n"
    MSNODES="$MSNODES --node $n=${x#*=} --agent $n=http://127.0.0.1:${APORT[$n]}"
done
echo "control plane, 3 nodes and their agents up in $(( $(date +%s) - t0 )) s"
# shellcheck disable=SC2086
"$MIGSCHEDD" --listen "127.0.0.1:$port" --state-dir "$D/migschedd" --backend agent $MSNODES \
    --kube-api "$MS_K8S_API" --kube-token-file "$D/pki/extender.token" --kube-ca "$MS_K8S_CA" \
    --extender-ttl 10 2>"$D/migschedd.log" &
MSPID=$!
for i in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" || fail "migschedd did not come up"

api() { # api METHOD PATH [BODY [CONTENT-TYPE]]
    curl -sS --max-time 30 --fail-with-body --cacert "$MS_K8S_CA" -H "Authorization: Bearer $MS_K8S_TOKEN" \
        -H "Content-Type: ${4:-application/json}" -X "$1" "$MS_K8S_API$2" ${3:+--data-binary "$3"}
}
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
alloc() { # alloc NODE RESOURCE: the node's allocatable amount
    api GET "/api/v1/nodes/$1" | jq_ "d['status'].get('allocatable',{}).get('migsched.io/$2','0')"
}
wait_alloc() { # wait_alloc NODE RESOURCE OP N SECONDS
    local i v
    for ((i = 0; i < $5 * 2; i++)); do
        v=$(alloc "$1" "$2" 2>/dev/null || echo 0)
        [ "$v" "$3" "$4" ] && return 0
        sleep 0.5
    done
    fail "node $1: allocatable migsched.io/$2 is $v, not $3 $4 within $5 s"
}
for x in $NODES; do wait_alloc "${x%%=*}" mem-gb -gt 0 60; done
echo "device plugins registered: mig node allocatable mig-3g.20gb=$(alloc mig mig-3g.20gb), whole mig-7g.40gb=$(alloc whole mig-7g.40gb), ts gpu-share=$(alloc ts gpu-share)"

# pod NAME RESOURCE [NODE]: NODE pins it with a nodeSelector (kube-scheduler
# and the extender still decide); it prints what it sees, then sleeps.
pod() {
    local sel=""
    [ -z "${3:-}" ] || sel="\"nodeSelector\":{\"kubernetes.io/hostname\":\"$3\"},"
    api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\"},
      \"spec\":{\"schedulerName\":\"migsched\",$sel\"hostNetwork\":true,\"terminationGracePeriodSeconds\":1,
        \"containers\":[{\"name\":\"c\",\"image\":\"migsched.test/busybox:1\",\"imagePullPolicy\":\"Never\",
          \"command\":[\"/bin/sh\",\"-c\",\"echo NVD=\$NVIDIA_VISIBLE_DEVICES; for f in /dev/nvidia*; do [ -c \$f ] && echo DEV=\$f; done; echo SEEN; exec sleep 3600\"],
          \"resources\":{\"limits\":{\"migsched.io/$2\":\"1\"}}}]}}" >/dev/null
}
getpod() { api GET "/api/v1/namespaces/default/pods/$1"; }
# wait_running NAME: waits for phase Running; prints the seconds from
# migschedd's bind (its log's "pod bound" time) to the first poll (every
# 0.2 s) that saw Running
wait_running() {
    local i st
    for ((i = 0; i < 600; i++)); do
        st=$(getpod "$1" | jq_ "d['status'].get('phase','')")
        if [ "$st" = Running ]; then
            python3 - "$D/migschedd.log" "$1" "$(date +%s.%N)" <<'PY'
import json, sys
t = [json.loads(l)["ts"] for l in open(sys.argv[1]) if '"pod bound"' in l and json.loads(l).get("pod") == sys.argv[2]]
print("%.1f" % (float(sys.argv[3]) - t[-1]) if t else "nan")
PY
            return 0
        fi
        sleep 0.2
    done
    getpod "$1" | jq_ "d['status']" >&2
    fail "pod $1 not Running within 120 s"
}
logs() { # logs NAME: the container's output (its CRI log file on the node) once it printed SEEN
    local i l f uid node
    uid=$(getpod "$1" | jq_ "d['metadata']['uid']")
    node=$(getpod "$1" | jq_ "d['spec']['nodeName']")
    for ((i = 0; i < 100; i++)); do
        f=$(ls "$D/nodes/$node/pod-logs/default_$1_$uid/c/"*.log 2>/dev/null | sort | tail -n 1)
        l=$( [ -n "$f" ] && cut -d' ' -f4- "$f" || true)
        case "$l" in *SEEN*) echo "$l"; return 0 ;; esac
        sleep 0.2
    done
    fail "pod $1: no output in its log on $node: $l"
}
ann() { getpod "$1" | jq_ "d['metadata'].get('annotations',{}).get('$2','')"; }
# sees NAME: the container's NVIDIA_VISIBLE_DEVICES is exactly its pod's
# instance (MIG uuid, or the GPU uuid for whole GPUs and shares) and it has
# the GPU's device nodes; prints the uuid
sees() {
    local l want nvd gpu
    l=$(logs "$1")
    want=$(ann "$1" migsched.io/instance-uuid)
    [ -n "$want" ] || want=$(ann "$1" migsched.io/gpu-uuid)
    [ -n "$want" ] || fail "pod $1 has no migsched.io instance annotation"
    nvd=$(echo "$l" | sed -n 's/^NVD=//p')
    [ "$nvd" = "$want" ] || fail "pod $1 sees NVIDIA_VISIBLE_DEVICES='$nvd', its instance is $want"
    gpu=$(ann "$1" migsched.io/placement | cut -d/ -f2)
    for dv in "/dev/nvidia$gpu" /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools; do
        echo "$l" | grep -qx "DEV=$dv" || fail "pod $1: no device node $dv in the container: $l"
    done
    echo "$nvd"
}
delete() { api DELETE "/api/v1/namespaces/default/pods/$1" >/dev/null; }
wait_gone() {
    local i
    for ((i = 0; i < 300; i++)); do
        api GET "/api/v1/namespaces/default/pods/$1" >/dev/null 2>&1 || return 0
        sleep 0.2
    done
    fail "pod $1 not gone within 60 s"
}
TIMES=

# 1. MIG node: two 3g.20gb pods fill its GPU, each sees its own instance
pod m1 mig-3g.20gb mig; TIMES="$TIMES $(wait_running m1)"
pod m2 mig-3g.20gb mig; TIMES="$TIMES $(wait_running m2)"
u1=$(sees m1); u2=$(sees m2)
[ "$u1" != "$u2" ] || fail "m1 and m2 see the same instance $u1"
echo "mig: m1 sees $u1, m2 sees $u2 (bound to Running: $TIMES s)"
pod m3 mig-3g.20gb mig
sleep 3
[ -z "$(getpod m3 | jq_ "d['spec'].get('nodeName') or ''")" ] || fail "m3 was bound although the GPU is full"
place1=$(ann m1 migsched.io/placement)
delete m1; wait_gone m1
TIMES="$TIMES $(wait_running m3)"
u3=$(sees m3)
[ "$(ann m3 migsched.io/placement)" = "$place1" ] || fail "m3 did not get m1's freed room ($place1)"
[ "$u3" != "$u2" ] || fail "m3 sees m2's instance"
echo "mig: m1 deleted, m3 runs on its freed room $place1 and sees $u3"

# 2. the kubelet restarted: registration again, running pods untouched
rc0=$(getpod m2 | jq_ "d['status']['containerStatuses'][0]['restartCount']")
regs=$(grep -c '"device plugin registered"' "$D/nodes/mig/agent.log" || true)
bash "$here/node.sh" restart-kubelet "$D" mig >>"$D/nodes.log" 2>&1 || fail "kubelet restart"
for i in $(seq 1 120); do
    [ "$(grep -c '"device plugin registered"' "$D/nodes/mig/agent.log" || true)" -ge $((regs * 2)) ] && break
    sleep 0.5
done
[ "$(grep -c '"device plugin registered"' "$D/nodes/mig/agent.log")" -ge $((regs * 2)) ] ||
    fail "the agent did not register again after the kubelet restart"
wait_alloc mig mig-3g.20gb -gt 0 60
[ "$(getpod m2 | jq_ "d['status']['containerStatuses'][0]['restartCount']")" = "$rc0" ] ||
    fail "m2's container restarted with the kubelet"
[ "$(sees m2)" = "$u2" ] || fail "m2 lost its instance"
delete m3; wait_gone m3
pod m4 mig-3g.20gb mig; TIMES="$TIMES $(wait_running m4)"
u4=$(sees m4)
echo "kubelet restarted: $regs resources registered again, m2 kept its container, m4 sees $u4"

# 3. the agent killed and restarted: ListAndWatch resumes, nothing lost
pid=$(awk '$1 == "mig-agent" {print $2}' "$D/pids" | tail -n 1)
kill -KILL "$pid"
sleep 1
agent_start mig
wait_alloc mig mig-3g.20gb -gt 0 60
[ "$(sees m2)" = "$u2" ] && [ "$(sees m4)" = "$u4" ] || fail "a running pod lost its instance with the agent"
delete m2; wait_gone m2
pod m5 mig-3g.20gb mig; TIMES="$TIMES $(wait_running m5)"
u5=$(sees m5)
[ "$u5" != "$u4" ] || fail "m5 sees m4's instance"
echo "agent restarted: m4 kept $u4, m5 sees $u5"

# 4. a pod migschedd did not bind never runs (no job: PreStartContainer refuses)
api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"rogue\"},
  \"spec\":{\"nodeName\":\"mig\",\"hostNetwork\":true,\"terminationGracePeriodSeconds\":1,
    \"containers\":[{\"name\":\"c\",\"image\":\"migsched.test/busybox:1\",\"imagePullPolicy\":\"Never\",
      \"command\":[\"/bin/sleep\",\"3600\"],\"resources\":{\"limits\":{\"migsched.io/mig-1g.5gb\":\"1\"}}}]}}" >/dev/null
for i in $(seq 1 150); do
    why=$(getpod rogue | jq_ "' '.join((c.get('state',{}).get('waiting') or {}).get('message','') for c in d['status'].get('containerStatuses',[]))")
    case "$why" in *"no migsched.io/job"*) break ;; esac
    sleep 0.2
done
case "$why" in *"no migsched.io/job"*) ;; *) fail "rogue pod: not refused by the device plugin (status: $why)" ;; esac
[ "$(getpod rogue | jq_ "d['status'].get('phase')")" != Running ] || fail "the rogue pod runs"
echo "a pod migschedd did not bind: never started ($(echo "$why" | cut -c1-100)...)"
delete rogue

# 5. no device plugin: the resources go, a new pod waits
delete m5; wait_gone m5
pid=$(awk '$1 == "mig-agent" {print $2}' "$D/pids" | tail -n 1)
kill -TERM "$pid"
wait_alloc mig mig-1g.5gb = 0 90
pod m6 mig-1g.5gb mig
sleep 4
[ -z "$(getpod m6 | jq_ "d['spec'].get('nodeName') or ''")" ] || fail "m6 was bound to a node without its device plugin"
agent_start mig
TIMES="$TIMES $(wait_running m6)"
sees m6 >/dev/null
echo "device plugin stopped: allocatable 0, m6 waited; back: m6 runs"

# 6. time-sliced node: two shares of one GPU
pod s1 gpu-share ts; TIMES="$TIMES $(wait_running s1)"
pod s2 gpu-share ts; TIMES="$TIMES $(wait_running s2)"
g1=$(sees s1); g2=$(sees s2)
[ "$g1" = "$g2" ] || fail "s1 and s2 should share one GPU: $g1 $g2"
case "$g1" in GPU-*) ;; *) fail "a share sees '$g1', not a GPU uuid" ;; esac
echo "time-sliced: s1 and s2 share $g1"

# 7. whole-GPU node
pod w1 mig-7g.40gb whole; TIMES="$TIMES $(wait_running w1)"
g=$(sees w1)
case "$g" in GPU-*) ;; *) fail "the whole-GPU pod sees '$g', not a GPU uuid" ;; esac
echo "whole GPU: w1 sees $g"

echo "bound to Running (s):$TIMES"
python3 -c "import sys; v=sorted(float(x) for x in sys.argv[1:] if x != 'nan'); print('bound to Running: %d pods, median %.1f s, max %.1f s' % (len(v), v[len(v)//2], v[-1]))" $TIMES
api DELETE "/api/v1/namespaces/default/pods" >/dev/null
kill -TERM "$MSPID"; wait "$MSPID" || fail "migschedd exited with $? after SIGTERM"
MSPID=
echo "k8s node e2e: passed in $(( $(date +%s) - t0 )) s"
