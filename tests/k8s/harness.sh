#!/usr/bin/env bash
# A real Kubernetes control plane on 127.0.0.1 for tests: etcd,
# kube-apiserver and kube-scheduler of the pinned release (build-tools.sh),
# kube-controller-manager when MS_K8S_KCM names its controllers ("*",
# "resourceclaim-controller", ...), its identity bound to the ClusterRoles
# system:controller:R for each R in MS_K8S_KCM_ROLES (default
# "resource-claim-controller generic-garbage-collector"; test_e2e_preempt.sh
# names disruption-controller). Nodes are API objects with capacity, or real
# kubelets that node.sh starts on this control plane (stop stops them too).
# MS_K8S_IGNORED_BY_SCHEDULER (default true) is the extender's
# managedResources' ignoredByScheduler. MS_K8S_SCHED_QPS sets kube-scheduler's
# clientConnection qps (burst twice that; unset: its defaults, 50 and 100,
# which pace the bindings it posts itself, not an extender's).
# MS_K8S_NODES_TO_SCORE sets percentageOfNodesToScore (default 100: every
# feasible node; 0: kube-scheduler's adaptive default).
#
#   harness.sh start DIR     start everything, state and logs in DIR
#   harness.sh standin DIR [ARGS]  start the stand-in extender
#                            (standin_extender.py; ARGS are passed to it)
#   harness.sh stop DIR      stop everything started for DIR
#   harness.sh env DIR       print DIR/env (sourceable settings, see below)
#
# start writes DIR/env with MS_K8S_API (https URL), MS_K8S_CA, MS_K8S_TOKEN
# (admin, system:masters), MS_K8S_EXT_TOKEN (user migsched-extender with
# only the rights an extender needs), MS_K8S_KUBECONFIG (admin kubeconfig),
# MS_K8S_AGENT_TOKEN_FILE and MS_K8S_DRA_TOKEN_FILE (the node agents, as
# device plugins and as DRA drivers, with the shipped roles),
# MS_K8S_EXTENDER_URL and MS_K8S_EXTENDER_PORT (where kube-scheduler calls
# the extender). The extender URL is chosen before kube-scheduler starts;
# set MS_K8S_EXTENDER_URL to use a given one, otherwise a free port is used.
# The extender itself (stand-in or migsched) may start afterwards.
#
# Processes: start stops whatever it started when any step fails, and leaves
# a watchdog that stops everything when the calling process (its parent, or
# MS_K8S_OWNER_PID) exits without calling stop.
set -eu
. "$(dirname "$0")/lib.sh"

die() { echo "harness: $*" >&2; exit 1; }
log() { echo "harness: $*"; }

# free_ports N: N distinct free TCP ports on 127.0.0.1 (kept bound until all
# are chosen, so they differ; a small race with other programs remains).
free_ports() {
    python3 - "$1" <<'EOF'
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
print(" ".join(str(s.getsockname()[1]) for s in socks))
EOF
}

alive() { # alive PID: running, not a zombie that nobody has reaped yet
    local st
    st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
    [ -n "$st" ] && [ "${st%% *}" != Z ]
}

# wait_for WHAT SECONDS PIDFILE-NAME COMMAND...: polls COMMAND until it
# succeeds; fails early when the process named in DIR/pids has died.
wait_for() {
    local what=$1 secs=$2 name=$3 i pid
    shift 3
    pid=$(awk -v n="$name" '$1 == n {print $2}' "$D/pids")
    for ((i = 0; i < secs * 5; i++)); do
        if "$@" >/dev/null 2>&1; then log "$what ready ($((i / 5)) s)"; return 0; fi
        alive "$pid" || { tail -n 30 "$D/$name.log" >&2; die "$what exited; log: $D/$name.log"; }
        sleep 0.2
    done
    tail -n 30 "$D/$name.log" >&2
    die "$what not ready after $secs s; log: $D/$name.log"
}

# spawn NAME CMD...: runs CMD in the background, output to DIR/NAME.log, and
# records its pid in DIR/pids.
spawn() {
    local name=$1
    shift
    "$@" >"$D/$name.log" 2>&1 </dev/null &
    echo "$name $!" >>"$D/pids"
}

# stop_nodes: every node of node.sh (its containers and shims are not in
# DIR/pids), before the processes that are.
stop_nodes() {
    local n
    [ -d "$D/nodes" ] || return 0
    for n in "$D"/nodes/*/; do
        [ -d "$n" ] && bash "$MS_K8S_DIR/node.sh" stop "$D" "$(basename "$n")" || true
    done
}

# stop_all: stops the recorded processes newest first, each before the next
# (kube-apiserver shuts down cleanly only while etcd is still up): TERM, up
# to 10 s, then KILL. Only a process still the one we started is signalled
# (its command line names DIR), never a reused pid.
stop_all() {
    local name pid i
    [ -f "$D/pids" ] || return 0
    stop_nodes
    while read -r name pid; do
        [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF "$D" || continue
        kill -TERM "$pid" 2>/dev/null || continue
        for ((i = 0; i < 50; i++)); do
            alive "$pid" || break
            sleep 0.2
        done
        if alive "$pid"; then
            echo "harness: $name ($pid) ignored TERM for 10 s; killing" >&2
            kill -KILL "$pid" 2>/dev/null || true
        fi
    done < <(tac "$D/pids")
    rm -f "$D/pids"
}

api() { # api METHOD PATH [BODY]: admin request, body from $3
    curl -sS --max-time 30 --fail-with-body --cacert "$D/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" \
        -H 'Content-Type: application/json' -X "$1" "https://127.0.0.1:$API_PORT$2" ${3:+--data-binary "$3"}
}

gen_pki() {
    local p=$D/pki
    mkdir -p "$p"
    ( cd "$p"
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
          -subj "/CN=migsched-test-ca" -keyout ca.key -out ca.crt
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
          -subj "/CN=kube-apiserver" -keyout apiserver.key -out apiserver.csr
      printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n' >apiserver.ext
      openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
          -extfile apiserver.ext -out apiserver.crt
      # One EC key signs and verifies service-account tokens.
      openssl ecparam -name prime256v1 -genkey -noout -out sa.key
    ) >"$D/pki.log" 2>&1 || { cat "$D/pki.log" >&2; die "openssl failed"; }
    ADMIN_TOKEN=$(openssl rand -hex 16)
    SCHED_TOKEN=$(openssl rand -hex 16)
    EXT_TOKEN=$(openssl rand -hex 16)
    KUBELET_TOKEN=$(openssl rand -hex 16)
    KCM_TOKEN=$(openssl rand -hex 16)
    AGENT_TOKEN=$(openssl rand -hex 16)
    DRA_TOKEN=$(openssl rand -hex 16)
    # token,user,uid,"groups"
    {
        echo "$ADMIN_TOKEN,migsched-admin,uid-admin,\"system:masters\""
        echo "$SCHED_TOKEN,system:kube-scheduler,uid-scheduler"
        echo "$EXT_TOKEN,migsched-extender,uid-extender"
        echo "$KUBELET_TOKEN,migsched-kubelet,uid-kubelet,\"system:nodes\""
        echo "$KCM_TOKEN,system:kube-controller-manager,uid-kcm"
        echo "$AGENT_TOKEN,migsched-agent,uid-agent"
        echo "$DRA_TOKEN,migsched-dra,uid-dra"
    } >"$p/tokens.csv"
    echo "$AGENT_TOKEN" >"$p/agent.token"
    echo "$DRA_TOKEN" >"$p/dra.token"
    echo "$EXT_TOKEN" >"$p/extender.token"
    echo "$KUBELET_TOKEN" >"$p/kubelet.token"
    chmod 600 "$p"/*.key "$p/tokens.csv" "$p/extender.token" "$p/kubelet.token" "$p/agent.token" "$p/dra.token"
}

kubeconfig() { # kubeconfig FILE TOKEN
    cat >"$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: migsched-test
  cluster:
    server: https://127.0.0.1:$API_PORT
    certificate-authority: $D/pki/ca.crt
users:
- name: user
  user:
    token: $2
contexts:
- name: migsched-test
  context: {cluster: migsched-test, user: user}
current-context: migsched-test
EOF
    chmod 600 "$1"
}

scheduler_config() {
    cat >"$D/scheduler.yaml" <<EOF
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $D/scheduler.kubeconfig
${MS_K8S_SCHED_QPS:+  qps: $MS_K8S_SCHED_QPS
  burst: $((${MS_K8S_SCHED_QPS:-0} * 2))}
leaderElection:
  leaderElect: false
# The extender must see every feasible node, not a sample (the tests);
# MS_K8S_NODES_TO_SCORE=0 leaves kube-scheduler's adaptive default (50%
# less 1% per 125 nodes, at least 5%: 500 of 5,000), as deployments run it.
percentageOfNodesToScore: ${MS_K8S_NODES_TO_SCORE:-100}
profiles:
- schedulerName: default-scheduler
- schedulerName: migsched
# Extenders are top level and shared by all profiles; managedResources makes
# only pods that ask for a migsched.io resource go to it.
extenders:
- urlPrefix: "$EXT_URL"
  filterVerb: filter
  prioritizeVerb: prioritize
  bindVerb: bind
  weight: 5
  httpTimeout: 10s
  nodeCacheCapable: true
  ignorable: false
  managedResources:
EOF
    local r
    for r in $MS_K8S_RESOURCES; do
        printf '  - {name: %s, ignoredByScheduler: %s}\n' "$r" "${MS_K8S_IGNORED_BY_SCHEDULER:-true}" >>"$D/scheduler.yaml"
    done
}

# The extender's identity (user migsched-extender) gets exactly the rights
# deploy/kubernetes/rbac.yaml gives migschedd: its ClusterRole and its
# leader-election Role (namespace migsched), bound to that user instead of
# the ServiceAccount, so the tests run with the RBAC the project ships.
extender_rbac() {
    local rbac
    rbac=$(cd "$MS_K8S_DIR/../.." && pwd)/deploy/kubernetes/rbac.yaml
    api POST /api/v1/namespaces '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"migsched"}}' >/dev/null
    python3 - "$rbac" >"$D/rbac.jsonl" <<'PY'
import json, sys, yaml
docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(open(sys.argv[1])) if d}
user = [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "migsched-extender"}]
role = docs[("ClusterRole", "migsched-extender")]
lease = docs[("Role", "migschedd-leader-election")]
print(json.dumps(["/apis/rbac.authorization.k8s.io/v1/clusterroles", role]))
print(json.dumps(["/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
    "metadata": {"name": "migsched-extender-test"}, "subjects": user,
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "migsched-extender"}}]))
# the node agents (tests/k8s/node.sh) get exactly the agent's ClusterRole
agent = docs[("ClusterRole", "migsched-agent")]
print(json.dumps(["/apis/rbac.authorization.k8s.io/v1/clusterroles", agent]))
print(json.dumps(["/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
    "metadata": {"name": "migsched-agent-test"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "migsched-agent"}],
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "migsched-agent"}}]))
# the agents as DRA drivers (test_e2e_dra.sh) get exactly the driver's
# ClusterRole (deploy/kubernetes/dra/rbac.yaml), as user migsched-dra
import os
dra = os.path.join(os.path.dirname(sys.argv[1]), "dra", "rbac.yaml")
if os.path.exists(dra):
    ddocs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(open(dra)) if d}
    print(json.dumps(["/apis/rbac.authorization.k8s.io/v1/clusterroles", ddocs[("ClusterRole", "migsched-dra-driver")]]))
    print(json.dumps(["/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "migsched-dra-driver-test"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "migsched-dra"}],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "migsched-dra-driver"}}]))
ns = lease["metadata"]["namespace"]
print(json.dumps(["/apis/rbac.authorization.k8s.io/v1/namespaces/%s/roles" % ns, lease]))
print(json.dumps(["/apis/rbac.authorization.k8s.io/v1/namespaces/%s/rolebindings" % ns, {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
    "metadata": {"name": "migschedd-leader-election-test", "namespace": ns}, "subjects": user,
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": lease["metadata"]["name"]}}]))
PY
    local path body
    while IFS= read -r line; do
        path=$(printf '%s' "$line" | python3 -c 'import json,sys; print(json.load(sys.stdin)[0])')
        body=$(printf '%s' "$line" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)[1]))')
        api POST "$path" "$body" >/dev/null
    done <"$D/rbac.jsonl"
    # The nodes' kubelets (node.sh) share one identity; the API server runs
    # RBAC only (no Node authorizer), so it gets the role system:node.
    api POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings '{"apiVersion":"rbac.authorization.k8s.io/v1",
      "kind":"ClusterRoleBinding","metadata":{"name":"migsched-test-kubelets"},
      "subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"migsched-kubelet"}],
      "roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"system:node"}}' >/dev/null
}

# The extended resources the migsched profile manages (A100-40GB profiles
# and a time-sliced share); kube-scheduler ignores them, the extender counts.
MS_K8S_RESOURCES=${MS_K8S_RESOURCES:-"migsched.io/mig-1g.5gb migsched.io/mig-2g.10gb migsched.io/mig-3g.20gb migsched.io/mig-4g.20gb migsched.io/mig-7g.40gb migsched.io/gpu-share"}

cmd_start() {
    [ -n "${D:-}" ] || die "usage: harness.sh start DIR"
    ms_k8s_bins_ok || die "no Kubernetes $MS_K8S_VERSION binaries in $MS_K8S_BIN; run tests/k8s/build-tools.sh"
    for t in openssl curl python3; do command -v "$t" >/dev/null || die "$t not found"; done
    [ ! -f "$D/pids" ] || die "$D is in use (harness.sh stop $D first)"
    mkdir -p "$D"
    D=$(cd "$D" && pwd)
    local owner=${MS_K8S_OWNER_PID:-$PPID}
    trap 'rc=$?; [ $rc -eq 0 ] || { log "start failed, stopping"; stop_all; }' EXIT
    : >"$D/pids"

    read -r ETCD_PORT PEER_PORT API_PORT SCHED_PORT EXT_PORT <<<"$(free_ports 5)"
    if [ -n "${MS_K8S_EXTENDER_URL:-}" ]; then
        EXT_URL=$MS_K8S_EXTENDER_URL
        EXT_PORT=$(echo "$EXT_URL" | sed -n 's,^http://127\.0\.0\.1:\([0-9]*\).*,\1,p')
    else
        EXT_URL=http://127.0.0.1:$EXT_PORT/migsched
    fi
    gen_pki
    local B=$MS_K8S_BIN

    log "etcd ${MS_ETCD_VERSION} on 127.0.0.1:$ETCD_PORT"
    spawn etcd "$B/etcd" --name migsched-test --data-dir "$D/etcd-data" \
        --listen-client-urls "http://127.0.0.1:$ETCD_PORT" --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
        --listen-peer-urls "http://127.0.0.1:$PEER_PORT" --initial-advertise-peer-urls "http://127.0.0.1:$PEER_PORT" \
        --initial-cluster "migsched-test=http://127.0.0.1:$PEER_PORT" --unsafe-no-fsync --log-level warn
    wait_for etcd 30 etcd curl -sf --max-time 5 "http://127.0.0.1:$ETCD_PORT/readyz"

    log "kube-apiserver ${MS_K8S_VERSION} on https://127.0.0.1:$API_PORT"
    # No kubelet and no controller-manager: TaintNodesByCondition would taint
    # every new node not-ready for good, ServiceAccount would refuse pods
    # whose "default" service account no controller creates.
    spawn kube-apiserver "$B/kube-apiserver" \
        --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
        --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$API_PORT" \
        --cert-dir "$D/apiserver-certs" \
        --tls-cert-file "$D/pki/apiserver.crt" --tls-private-key-file "$D/pki/apiserver.key" \
        --client-ca-file "$D/pki/ca.crt" --token-auth-file "$D/pki/tokens.csv" \
        --service-account-issuer https://kubernetes.default.svc \
        --service-account-key-file "$D/pki/sa.key" --service-account-signing-key-file "$D/pki/sa.key" \
        --authorization-mode RBAC --service-cluster-ip-range 10.0.0.0/24 \
        --endpoint-reconciler-type none \
        --disable-admission-plugins TaintNodesByCondition,ServiceAccount \
        --profiling=false --v 1
    wait_for kube-apiserver 90 kube-apiserver \
        curl -sf --max-time 5 --cacert "$D/pki/ca.crt" -H "Authorization: Bearer $ADMIN_TOKEN" "https://127.0.0.1:$API_PORT/readyz"
    extender_rbac

    kubeconfig "$D/kubeconfig" "$ADMIN_TOKEN"
    kubeconfig "$D/scheduler.kubeconfig" "$SCHED_TOKEN"
    kubeconfig "$D/extender.kubeconfig" "$EXT_TOKEN"
    scheduler_config
    log "kube-scheduler ${MS_K8S_VERSION} (profiles default-scheduler, migsched; extender $EXT_URL)"
    spawn kube-scheduler "$B/kube-scheduler" --config "$D/scheduler.yaml" \
        --bind-address 127.0.0.1 --secure-port "$SCHED_PORT" --cert-dir "$D/scheduler-certs" --v 2
    wait_for kube-scheduler 60 kube-scheduler curl -sfk --max-time 5 "https://127.0.0.1:$SCHED_PORT/readyz"

    if [ -n "${MS_K8S_KCM:-}" ]; then
        local kcm_port r
        kcm_port=$(free_ports 1)
        # It runs with its own identity (no per-controller service-account
        # credentials), whose default role lacks the controllers' rights:
        # bind it the roles of the controllers it runs (by default those the
        # DRA claim lifecycle needs: claims from templates, reservedFor;
        # garbage collection by owner).
        for r in ${MS_K8S_KCM_ROLES:-resource-claim-controller generic-garbage-collector}; do
            api POST /apis/rbac.authorization.k8s.io/v1/clusterrolebindings "{\"apiVersion\":\"rbac.authorization.k8s.io/v1\",
              \"kind\":\"ClusterRoleBinding\",\"metadata\":{\"name\":\"migsched-test-kcm-$r\"},
              \"subjects\":[{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"User\",\"name\":\"system:kube-controller-manager\"}],
              \"roleRef\":{\"apiGroup\":\"rbac.authorization.k8s.io\",\"kind\":\"ClusterRole\",\"name\":\"system:controller:$r\"}}" >/dev/null
        done
        kubeconfig "$D/kcm.kubeconfig" "$KCM_TOKEN"
        log "kube-controller-manager ${MS_K8S_VERSION} (controllers $MS_K8S_KCM)"
        spawn kube-controller-manager "$B/kube-controller-manager" --kubeconfig "$D/kcm.kubeconfig" \
            --controllers "$MS_K8S_KCM" --leader-elect=false --use-service-account-credentials=false \
            --bind-address 127.0.0.1 --secure-port "$kcm_port" --cert-dir "$D/kcm-certs" \
            --service-account-private-key-file "$D/pki/sa.key" --root-ca-file "$D/pki/ca.crt" --v 1
        wait_for kube-controller-manager 60 kube-controller-manager curl -sfk --max-time 5 "https://127.0.0.1:$kcm_port/healthz"
    fi

    cat >"$D/env" <<EOF
MS_K8S_STATE=$D
MS_K8S_API=https://127.0.0.1:$API_PORT
MS_K8S_CA=$D/pki/ca.crt
MS_K8S_TOKEN=$ADMIN_TOKEN
MS_K8S_EXT_TOKEN=$EXT_TOKEN
MS_K8S_AGENT_TOKEN_FILE=$D/pki/agent.token
MS_K8S_DRA_TOKEN_FILE=$D/pki/dra.token
MS_K8S_KUBECONFIG=$D/kubeconfig
MS_K8S_EXTENDER_URL=$EXT_URL
MS_K8S_EXTENDER_PORT=$EXT_PORT
MS_K8S_RESOURCES="$MS_K8S_RESOURCES"
EOF
    # Watchdog: stops everything if the owner exits without "stop". Its
    # command line names DIR, so stop_all ends it too.
    nohup bash "$MS_K8S_DIR/harness.sh" watchdog "$D" "$owner" >"$D/watchdog.log" 2>&1 </dev/null &
    echo "watchdog $!" >>"$D/pids"
    trap - EXIT
    log "up; settings in $D/env"
}

cmd_standin() {
    [ -f "$D/env" ] || die "no $D/env (harness.sh start first)"
    . "$D/env"
    mkdir -p "$D/contract-log"
    spawn standin python3 -B "$MS_K8S_DIR/standin_extender.py" --port "$MS_K8S_EXTENDER_PORT" \
        --prefix "/${MS_K8S_EXTENDER_URL#http://127.0.0.1:*/}" --api "$MS_K8S_API" --ca "$MS_K8S_CA" \
        --token-file "$D/pki/extender.token" --log-dir "$D/contract-log" "$@"
    wait_for standin 20 standin curl -sf --max-time 5 "http://127.0.0.1:$MS_K8S_EXTENDER_PORT/healthz"
}

cmd_watchdog() {
    local owner=$1
    while alive "$owner"; do sleep 1; done
    [ -f "$D/pids" ] || exit 0
    echo "owner $owner gone; stopping"
    # Do not TERM ourselves first: drop our own line, stop the rest.
    grep -v "^watchdog $$\$" "$D/pids" >"$D/pids.w" || true
    mv "$D/pids.w" "$D/pids"
    stop_all
}

verb=${1:-}
D=${2:-}
case "$verb" in
    start) cmd_start ;;
    standin) D=$(cd "$D" && pwd); shift 2; cmd_standin "$@" ;;
    stop) [ -n "$D" ] && [ -d "$D" ] || exit 0; D=$(cd "$D" && pwd); stop_all; log "stopped" ;;
    env) cat "$D/env" ;;
    watchdog) cmd_watchdog "$3" ;;
    *) die "usage: harness.sh start|standin|stop|env DIR" ;;
esac
