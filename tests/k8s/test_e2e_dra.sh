#!/usr/bin/env bash
# End to end: migsched-agent as the nodes' DRA driver (docs/dra.md) on real
# kubelets, with kube-scheduler's own DRA allocator and kube-controller-
# manager's claim lifecycle (resourceclaim-controller, garbage collector).
#
# The control plane of harness.sh and three real nodes (node.sh: kubelet
# v1.37.2, containerd 2.x, runc), each with migsched-agent --dra (sim
# backend, the fake driver's device nodes under --dev-root, the RBAC of
# deploy/kubernetes/dra/rbac.yaml); the DeviceClasses of
# deploy/kubernetes/dra/deviceclasses.yaml. Pods ask for MIG profiles by CEL
# selector through ResourceClaimTemplates, run the busybox image and print
# what they see; checked from inside the containers (their CRI log files):
#  - each node publishes its slices (counters, then one device slice per
#    GPU; 15 devices for an A100-40GB), owned by its Node;
#  - MIG node (1 x A100-40GB): a 1g.5gb pod is allocated by kube-scheduler's
#    first fit at start 0 and sees exactly the instance the agent made
#    there; a 3g.20gb pod gets start 4; a 4g.20gb pod cannot be allocated
#    (the 1g holds slice 0: first fit fragments), and gets its room when the
#    1g pod is deleted (unprepare destroyed the instance, the devices are
#    free again);
#  - the agent killed (-9) and restarted: running pods keep their instances,
#    and the new agent unprepares what the old one prepared; a memory-floor
#    selector (capacity >= 10Gi) gets the first 2g.10gb that fits;
#  - the kubelet restarted: it wipes the node's slices and the agent
#    publishes them again under a higher generation; the plugin registers
#    again; running containers are untouched, a new pod is prepared;
#  - a device whose slices hold an instance the driver did not make: the
#    prepare is refused with the holder named, the instance is untouched,
#    and the pod runs once it is gone;
#  - the agent stopped with --dra-cleanup: its slices go, another driver's
#    slice on the node stays;
#  - time-sliced node (1 GPU x 2): two claims share the GPU, a third waits;
#  - whole-GPU node: a claim gets the GPU, a second waits.
# Prints "k8s dra e2e: passed in N s", or "... skipped (REASON)" and exits
# 77 when the nodes cannot run here. MS_K8S_KEEP=1 keeps DIR (every log).
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

ms_e2e_begin "dra" yaml
ms_e2e_bin AGENT migsched-agent

ms_e2e_tools
ms_e2e_node

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-k8s-dra.XXXXXX")
cleanup() {
    rc=$?
    bash "$here/harness.sh" stop "$D" >/dev/null 2>&1 || true
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
        for f in nodes/mig/agent.log nodes/mig/kubelet.log kube-scheduler.log; do
            echo "--- $f (tail)"; tail -n 25 "$D/$f" 2>/dev/null || true
        done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
MS_K8S_KCM=resourceclaim-controller,garbage-collector-controller bash "$here/harness.sh" start "$D" >"$D/harness.log"
. "$D/env"
DRV=mig.migsched.io

api() { # api METHOD PATH [BODY]
    curl -sS --max-time 30 --fail-with-body --cacert "$MS_K8S_CA" -H "Authorization: Bearer $MS_K8S_TOKEN" \
        -H "Content-Type: application/json" -X "$1" "$MS_K8S_API$2" ${3:+--data-binary "$3"}
}
jq_() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
RES=/apis/resource.k8s.io/v1

# nodes: NAME=SPEC
NODES="mig=1xA100-40GB whole=1xA100-40GB:whole ts=1xA100-40GB:timeslice=2"
declare -A APORT
agent_start() { # agent_start NODE [EXTRA ARGS]
    local n=$1 spec= x N=$D/nodes/$1
    shift
    for x in $NODES; do [ "${x%%=*}" != "$n" ] || spec=${x#*=}; done
    bash "$here/node.sh" spawn "$D" "$n" agent "$AGENT" --backend sim --node-spec "$spec" --node-name "$n" \
        --listen "127.0.0.1:${APORT[$n]}" --state-dir "$N/agent" --cdi-dir "$N/cdi" --dev-root "$N/fakedrv" \
        --dra --dra-plugins-dir "$N/kubelet/plugins" --dra-registry-dir "$N/kubelet/plugins_registry" \
        --kube-api "$MS_K8S_API" --kube-token-file "$MS_K8S_DRA_TOKEN_FILE" --kube-ca "$MS_K8S_CA" "$@" >/dev/null
    for i in $(seq 1 100); do curl -sf -o /dev/null "http://127.0.0.1:${APORT[$n]}/healthz" && return 0; sleep 0.1; done
    fail "agent of $n did not come up"
}
agent_pid() { awk -v n="$1-agent" '$1 == n {print $2}' "$D/pids" | tail -n 1; }
inventory() { curl -sf "http://127.0.0.1:${APORT[$1]}/v1/inventory"; }
for x in $NODES; do
    n=${x%%=*}
    bash "$here/node.sh" start "$D" "$n" >>"$D/nodes.log" 2>&1 || { tail -n 20 "$D/nodes.log"; fail "node $n did not start"; }
    f=$D/nodes/$n/fakedrv/dev
    mkdir -p "$f"
    mknod "$f/nvidia0" c 195 0; mknod "$f/nvidiactl" c 195 255
    mknod "$f/nvidia-uvm" c 511 0; mknod "$f/nvidia-uvm-tools" c 511 1
    APORT[$n]=$(ms_free_port)
    agent_start "$n"
done
echo "control plane, 3 nodes and their DRA drivers up in $(( $(date +%s) - t0 )) s"

# slices NODE: "name:generation:devices ..." of this driver on NODE, sorted
slices() {
    api GET "$RES/resourceslices?fieldSelector=spec.nodeName%3D$1%2Cspec.driver%3D$DRV" | python3 -c '
import json, sys
for s in sorted(json.load(sys.stdin)["items"], key=lambda s: s["metadata"]["name"]):
    print("%s:%d:%d" % (s["metadata"]["name"], s["spec"]["pool"]["generation"], len(s["spec"].get("devices", []))))' | tr '\n' ' '
}
wait_slices() { # wait_slices NODE WANT SECONDS
    local i s
    for ((i = 0; i < $3 * 5; i++)); do
        s=$(slices "$1" 2>/dev/null || true)
        [ "$(echo "$s" | sed 's/:[0-9]*:/::/g')" = "$2" ] && { echo "$s"; return 0; }
        sleep 0.2
    done
    fail "node $1: slices '$s', want '$2' within $3 s"
}
s_mig=$(wait_slices mig "mig-$DRV-counters-0::0 mig-$DRV-gpu-000::15 " 30)
wait_slices whole "whole-$DRV-gpu-000::1 " 30 >/dev/null
wait_slices ts "ts-$DRV-gpu-000::1 " 30 >/dev/null
api GET "$RES/resourceslices" | python3 -c '
import json, sys
items = json.load(sys.stdin)["items"]
for s in items:
    (o,) = s["metadata"]["ownerReferences"]
    assert o["kind"] == "Node" and o["name"] == s["spec"]["nodeName"], o
ts = [s for s in items if s["spec"]["nodeName"] == "ts"][0]["spec"]["devices"][0]
assert ts["allowMultipleAllocations"] is True and ts["capacity"]["shares"]["value"] == "2", ts
' || fail "slices: owners or the time-sliced device"
echo "slices published: mig $s_mig; whole and ts one device each, owned by their Nodes"

python3 -c '
import json, sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])): print(json.dumps(d))' "$root/deploy/kubernetes/dra/deviceclasses.yaml" |
    while read -r l; do api POST "$RES/deviceclasses" "$l" >/dev/null; done

tmpl() { # tmpl NAME CLASS [CEL]
    python3 - "$@" <<'PY' >"$D/tmpl.json"
import json, sys
name, cls = sys.argv[1:3]
ex = {"deviceClassName": cls}
if len(sys.argv) > 3:
    ex["selectors"] = [{"cel": {"expression": sys.argv[3]}}]
print(json.dumps({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
                  "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": ex}]}}}}))
PY
    api POST "$RES/namespaces/default/resourceclaimtemplates" "$(cat "$D/tmpl.json")" >/dev/null
}
prof() { echo "device.attributes['$DRV'].profile == '$1'"; }
tmpl t1g mig.migsched.io "$(prof 1g.5gb)"
tmpl t3g mig.migsched.io "$(prof 3g.20gb)"
tmpl t4g mig.migsched.io "$(prof 4g.20gb)"
tmpl t10gi mig.migsched.io "device.capacity['$DRV'].memory.compareTo(quantity('10Gi')) >= 0"
tmpl tgpu gpu.migsched.io

pod() { # pod NAME TEMPLATE NODE
    api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"$1\"},
      \"spec\":{\"nodeSelector\":{\"kubernetes.io/hostname\":\"$3\"},\"hostNetwork\":true,\"terminationGracePeriodSeconds\":1,
        \"containers\":[{\"name\":\"c\",\"image\":\"migsched.test/busybox:1\",\"imagePullPolicy\":\"Never\",
          \"command\":[\"/bin/sh\",\"-c\",\"echo NVD=\$NVIDIA_VISIBLE_DEVICES; for f in /dev/nvidia*; do [ -c \$f ] && echo DEV=\$f; done; echo SEEN; exec sleep 3600\"],
          \"resources\":{\"claims\":[{\"name\":\"g\"}]}}],
        \"resourceClaims\":[{\"name\":\"g\",\"resourceClaimTemplateName\":\"$2\"}]}}" >/dev/null
    echo "$1 $(date +%s.%N)" >>"$D/created"
}
getpod() { api GET "/api/v1/namespaces/default/pods/$1"; }
TIMES=
wait_running() { # wait_running NAME [notime]: adds the seconds from creation to the first poll that saw Running
    local i
    for ((i = 0; i < 600; i++)); do
        if [ "$(getpod "$1" | jq_ "d['status'].get('phase','')")" = Running ]; then
            [ -z "${2:-}" ] || return 0
            TIMES="$TIMES $(python3 -c "import sys; print('%.1f' % (float(sys.argv[1]) - float(sys.argv[2])))" \
                "$(date +%s.%N)" "$(awk -v p="$1" '$1 == p {print $2}' "$D/created" | tail -n 1)")"
            return 0
        fi
        sleep 0.2
    done
    getpod "$1" | jq_ "d['status']" >&2
    fail "pod $1 not Running within 120 s"
}
claim_of() { getpod "$1" | jq_ "d['status']['resourceClaimStatuses'][0]['resourceClaimName']"; }
claim_get() { api GET "$RES/namespaces/default/resourceclaims/$1"; }
device_of() { claim_get "$(claim_of "$1")" | jq_ "' '.join(r['device'] for r in d['status']['allocation']['devices']['results'])"; }
uid_of() { claim_get "$(claim_of "$1")" | jq_ "d['metadata']['uid']"; }
logs() { # logs NAME: the container's output once it printed SEEN
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
# sees NAME NODE: the container sees exactly what the agent prepared for its
# claim: the MIG instance tagged dra:<claim uid> at the allocated device's
# placement (or, for whole GPUs and shares, the GPU), and the GPU's device
# nodes; prints the uuid
sees() {
    local l want nvd dv
    l=$(logs "$1")
    want=$(inventory "$2" | python3 -c '
import json, re, sys
inv, tag, dev = json.load(sys.stdin), "dra:" + sys.argv[1], sys.argv[2]
mine = [i for i in inv["instances"] if i["job"] == tag]
assert len(mine) == 1, mine
i = mine[0]
m = re.match(r"gpu-(\d+)-mig-([a-z0-9-]+)-(\d+)-(\d+)$", dev)
if m:
    assert (i["gpu"], i["start"], i["profile"].replace(".", "")) == (int(m.group(1)), int(m.group(4)), m.group(2)), (i, dev)
    print(i["uuid"])
else:
    assert i["start"] == -1 and dev == "gpu-%d" % i["gpu"], (i, dev)
    print(i["gpu_uuid"])' "$(uid_of "$1")" "$(device_of "$1")") || fail "pod $1: the agent's instance does not match its claim's device"
    nvd=$(echo "$l" | sed -n 's/^NVD=//p')
    [ "$nvd" = "$want" ] || fail "pod $1 sees NVIDIA_VISIBLE_DEVICES='$nvd', its instance is $want"
    for dv in /dev/nvidia0 /dev/nvidiactl /dev/nvidia-uvm /dev/nvidia-uvm-tools; do
        echo "$l" | grep -qx "DEV=$dv" || fail "pod $1: no device node $dv in the container: $l"
    done
    echo "$nvd"
}
unschedulable() { # unschedulable NAME SECONDS: FailedScheduling for its claims, not bound
    local i m
    for ((i = 0; i < $2 * 5; i++)); do
        m=$(api GET "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3D$1,reason%3DFailedScheduling" |
            jq_ "' '.join(e['message'] for e in d['items'])")
        case "$m" in *"cannot allocate all claims"*) break ;; esac
        sleep 0.2
    done
    case "$m" in *"cannot allocate all claims"*) ;; *) fail "pod $1: no 'cannot allocate all claims' ($m)" ;; esac
    [ -z "$(getpod "$1" | jq_ "d['spec'].get('nodeName') or ''")" ] || fail "pod $1 was bound"
}
delete() { api DELETE "/api/v1/namespaces/default/pods/$1" >/dev/null; }
wait_gone() { # wait_gone PATH
    local i
    for ((i = 0; i < 300; i++)); do
        api GET "$1" >/dev/null 2>&1 || return 0
        sleep 0.2
    done
    fail "$1 not gone within 60 s"
}
tagged() { inventory "$1" | jq_ "' '.join(sorted('%s@%d' % (i['profile'], i['start']) for i in d['instances'] if i['job'].startswith('dra:')))"; }

# 1. MIG node: first fit, fragmentation, unprepare frees the devices
pod m1 t1g mig; wait_running m1
[ "$(device_of m1)" = gpu-0-mig-1g5gb-19-0 ] || fail "m1 got $(device_of m1), not first fit's gpu-0-mig-1g5gb-19-0"
u1=$(sees m1 mig)
pod m2 t3g mig; wait_running m2
[ "$(device_of m2)" = gpu-0-mig-3g20gb-9-4 ] || fail "m2 got $(device_of m2)"
u2=$(sees m2 mig)
[ "$u1" != "$u2" ] || fail "m1 and m2 see the same instance"
echo "mig: m1 (1g.5gb) on $(device_of m1) sees $u1; m2 (3g.20gb) on $(device_of m2) sees $u2"
pod m3 t4g mig
unschedulable m3 20
echo "mig: m3 (4g.20gb) cannot be allocated: first fit put the 1g at slice 0"
c1=$(claim_of m1)
delete m1
wait_gone "$RES/namespaces/default/resourceclaims/$c1"
wait_running m3 notime
[ "$(device_of m3)" = gpu-0-mig-4g20gb-5-0 ] || fail "m3 got $(device_of m3)"
u3=$(sees m3 mig)
[ "$(tagged mig)" = "3g.20gb@4 4g.20gb@0" ] || fail "instances after m1's unprepare: $(tagged mig)"
echo "mig: m1 deleted, its instance destroyed and claim gone; m3 runs on $(device_of m3) and sees $u3"

# 2. the agent killed and restarted: nothing lost, the old claims unprepared by the new agent
before=$(inventory mig | jq_ "sorted((i['uuid'], i['job']) for i in d['instances'])")
kill -KILL "$(agent_pid mig)"
sleep 1
agent_start mig
[ "$(inventory mig | jq_ "sorted((i['uuid'], i['job']) for i in d['instances'])")" = "$before" ] ||
    fail "the inventory changed with the agent's restart"
[ "$(sees m2 mig)" = "$u2" ] && [ "$(sees m3 mig)" = "$u3" ] || fail "a running pod lost its instance"
delete m2
for i in $(seq 1 150); do [ "$(tagged mig)" = "4g.20gb@0" ] && break; sleep 0.2; done
[ "$(tagged mig)" = "4g.20gb@0" ] || fail "the restarted agent did not unprepare m2's claim: $(tagged mig)"
pod m4 t10gi mig; wait_running m4
[ "$(device_of m4)" = gpu-0-mig-2g10gb-14-4 ] || fail "m4 (memory >= 10Gi) got $(device_of m4)"
u4=$(sees m4 mig)
echo "agent restarted: m3 kept $u3, m2's instance destroyed by the new agent, m4 (memory >= 10Gi) on $(device_of m4)"

# 3. the kubelet restarted: slices wiped and published again, plugin registered again
gen0=$(slices mig | sed 's/^[^:]*:\([0-9]*\):.*/\1/')
regs=$(grep -c '"dra: registered with the kubelet"' "$D/nodes/mig/agent.log" || true)
rc0=$(getpod m3 | jq_ "d['status']['containerStatuses'][0]['restartCount']")
bash "$here/node.sh" restart-kubelet "$D" mig >>"$D/nodes.log" 2>&1 || fail "kubelet restart"
for i in $(seq 1 150); do
    [ "$(grep -c '"dra: registered with the kubelet"' "$D/nodes/mig/agent.log" || true)" -gt "$regs" ] && break
    sleep 0.2
done
[ "$(grep -c '"dra: registered with the kubelet"' "$D/nodes/mig/agent.log")" -gt "$regs" ] ||
    fail "the driver did not register again after the kubelet restart"
s=$(wait_slices mig "mig-$DRV-counters-0::0 mig-$DRV-gpu-000::15 " 30)
gen1=$(echo "$s" | sed 's/^[^:]*:\([0-9]*\):.*/\1/')
[ "$gen1" -gt "$gen0" ] || fail "generation $gen1 after the kubelet's wipe, was $gen0"
[ "$(getpod m3 | jq_ "d['status']['containerStatuses'][0]['restartCount']")" = "$rc0" ] ||
    fail "m3's container restarted with the kubelet"
[ "$(sees m3 mig)" = "$u3" ] || fail "m3 lost its instance"
echo "kubelet restarted: registered again, slices back at generation $gen1 (was $gen0), m3 untouched"

# 4. a device whose slices another instance holds: refused, nothing destroyed
other=$(curl -sf -X POST "http://127.0.0.1:${APORT[mig]}/v1/instances" \
    -d '{"gpu":0,"profile":"1g.5gb","start":6,"job":"not-dra"}' | jq_ "d['uuid']") || fail "the agent's own create"
pod m5 t1g mig
for i in $(seq 1 150); do
    m=$(api GET "/api/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dm5,reason%3DFailedPrepareDynamicResources" |
        jq_ "' '.join(e['message'] for e in d['items'])")
    case "$m" in *"holds 1g.5gb running job not-dra"*) break ;; esac
    sleep 0.2
done
case "$m" in *"device gpu-0-mig-1g5gb-19-6: GPU 0 start 6 holds 1g.5gb running job not-dra"*) ;; *) fail "m5: no refusal naming the holder ($m)" ;; esac
[ "$(getpod m5 | jq_ "d['status'].get('phase')")" != Running ] || fail "m5 runs on a taken device"
inventory mig | jq_ "[i for i in d['instances'] if i['uuid'] == '$other' and i['job'] == 'not-dra']" | grep -q MIG ||
    fail "the instance that holds the slices was touched"
curl -sf -X DELETE "http://127.0.0.1:${APORT[mig]}/v1/instances/$other" >/dev/null || fail "delete the holder"
wait_running m5 notime
u5=$(sees m5 mig)
echo "taken slices: m5's prepare refused ($(echo "$m" | grep -o 'device gpu-0-mig[^;]*' | head -c 160)...), the holder untouched; once it went, m5 runs with $u5"

# 5. the agent stopped with --dra-cleanup: its slices go, another driver's stay
api POST "$RES/resourceslices" '{"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":"mig-other-driver"},
  "spec":{"driver":"gpu.example.com","pool":{"name":"mig","generation":1,"resourceSliceCount":1},"nodeName":"mig",
  "devices":[{"name":"x"}]}}' >/dev/null
kill -TERM "$(agent_pid mig)"
sleep 1
agent_start mig --dra-cleanup
wait_slices mig "mig-$DRV-counters-0::0 mig-$DRV-gpu-000::15 " 30 >/dev/null
kill -TERM "$(agent_pid mig)"
for i in $(seq 1 50); do [ -z "$(slices mig)" ] && break; sleep 0.2; done
[ -z "$(slices mig)" ] || fail "--dra-cleanup left slices: $(slices mig)"
api GET "$RES/resourceslices/mig-other-driver" >/dev/null || fail "another driver's slice was deleted"
[ -n "$(slices whole)" ] && [ -n "$(slices ts)" ] || fail "other nodes' slices went too"
echo "agent stopped with --dra-cleanup: its slices deleted at once, gpu.example.com's slice and other nodes' kept"

# 6. time-sliced node: two claims share the GPU, a third waits
pod s1 tgpu ts; wait_running s1
pod s2 tgpu ts; wait_running s2
g1=$(sees s1 ts); g2=$(sees s2 ts)
[ "$g1" = "$g2" ] || fail "s1 and s2 should share one GPU: $g1 $g2"
case "$g1" in GPU-*) ;; *) fail "a share sees '$g1', not a GPU uuid" ;; esac
pod s3 tgpu ts
unschedulable s3 20
delete s1
wait_running s3 notime
[ "$(sees s3 ts)" = "$g1" ] || fail "s3 does not see the shared GPU"
echo "time-sliced: s1 and s2 share $g1, s3 waited for a share and got s1's"

# 7. whole-GPU node
pod w1 tgpu whole; wait_running w1
g=$(sees w1 whole)
case "$g" in GPU-*) ;; *) fail "the whole-GPU pod sees '$g'" ;; esac
pod w2 tgpu whole
unschedulable w2 20
echo "whole GPU: w1 sees $g, w2 waits"

# the sanitizers' reports, when the agents are ASan builds
if grep -l 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:' "$D"/nodes/*/agent.log 2>/dev/null; then
    fail "a sanitizer report in the agents' logs"
fi
python3 -c "import sys; v=sorted(float(x) for x in sys.argv[1:]); print('created to Running: %d pods, median %.1f s, max %.1f s' % (len(v), v[len(v)//2], v[-1]))" $TIMES
api DELETE "/api/v1/namespaces/default/pods" >/dev/null
echo "k8s dra e2e: passed in $(( $(date +%s) - t0 )) s"
