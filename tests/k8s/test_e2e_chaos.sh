#!/usr/bin/env bash
# Chaos on the real control plane (issue 20): two migschedd replicas with
# leader election (--backend agent) in front of a real kube-scheduler
# (harness.sh, leader_proxy.py as the Service), three migsched-agents (sim
# backend, 2xA100-40GB each). Each round (seeded: MS_CHAOS_SEED, printed):
# a burst of pods of every profile and gang sizes 1 and 2, some pods
# deleted at random, and one of: kill -9 of the leader, of the standby, of
# an agent (each restarted on its state), or nothing. After each round,
# waiting for conditions with generous deadlines (never a fixed sleep):
#  - a replica serves again (its /readyz 200), and after a leader's kill
#    within 2 lease durations plus the takeover's agent reads;
#  - chaos_check.py on the agents' inventories and the pod list: no running
#    pod's instance destroyed, no instance shared by two live pods, no two
#    instances overlapping on a GPU, every bound pod's instance there;
#  - the pods settle (the bound count steady) and every pending pod carries
#    the extender's reason (migschedd's filter found no room for it). That
#    no pending pod would fit is not asserted independently.
# Prints the counts per round and a summary. Exit 77 (skipped) without the
# Kubernetes binaries. MS_CHAOS_ROUNDS (default 20).
set -eu
export PYTHONDONTWRITEBYTECODE=1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/lib.sh"

ms_e2e_begin "chaos"
ms_e2e_bin MIGSCHEDD migschedd
ms_e2e_bin AGENT migsched-agent
ms_e2e_tools

SEED=${MS_CHAOS_SEED:-$(( $(date +%s) % 100000 ))}
ROUNDS=${MS_CHAOS_ROUNDS:-20}
LEASE=4
RANDOM=$SEED
echo "chaos: seed $SEED, $ROUNDS rounds (MS_CHAOS_SEED=$SEED reproduces the choices)"

D=$(mktemp -d "${TMPDIR:-/tmp}/migsched-chaos.XXXXXX")
declare -A PID
cleanup() {
    rc=$?
    for k in "${!PID[@]}"; do kill -TERM "${PID[$k]}" 2>/dev/null || true; done
    wait 2>/dev/null || true
    bash "$here/harness.sh" stop "$D" >/dev/null 2>&1 || true
    if [ $rc -ne 0 ] && [ $rc -ne 77 ]; then
        for f in migschedd-a migschedd-b agent-node-0 kube-scheduler; do
            echo "--- $f.log (tail)"; tail -n 15 "$D/$f.log" 2>/dev/null || true
        done
    fi
    if [ -n "${MS_K8S_KEEP:-}" ]; then echo "kept $D"; else rm -rf "$D"; fi
}
trap cleanup EXIT
t0=$(date +%s)
read -r pe pa pb p0 p1 p2 < <(python3 -c 'import socket
s = [socket.socket() for _ in range(6)]
for x in s: x.bind(("127.0.0.1", 0))
print(" ".join(str(x.getsockname()[1]) for x in s))')
APORT=("$p0" "$p1" "$p2")
MS_K8S_EXTENDER_URL=http://127.0.0.1:$pe/extender bash "$here/harness.sh" start "$D" >/dev/null
. "$D/env"
python3 "$here/leader_proxy.py" --listen "$pe" --backend "$pa" --backend "$pb" >"$D/proxy.log" 2>&1 &
PID[proxy]=$!
api() { ms_e2e_api "$@"; }
wait_until() { # wait_until SECONDS CMD...: true once CMD succeeds
    local end=$(( $(date +%s) + $1 )); shift
    while ! "$@" >/dev/null 2>&1; do [ "$(date +%s)" -lt "$end" ] || return 1; sleep 0.2; done
}

agent() { # agent N: (re)start node-N's agent on its state
    "$AGENT" --backend sim --node-spec 2xA100-40GB --node-name "node-$1" --listen "127.0.0.1:${APORT[$1]}" \
        --state-dir "$D/agent-$1" --cdi-dir "$D/cdi-$1" >>"$D/agent-node-$1.log" 2>&1 &
    PID[agent$1]=$!
    wait_until 30 curl -sf "http://127.0.0.1:${APORT[$1]}/healthz" || fail "agent $1 did not start"
}
AGENTS=""
NODES=""
for n in 0 1 2; do
    mkdir -p "$D/agent-$n" "$D/cdi-$n"
    agent "$n"
    AGENTS="$AGENTS --agent node-$n=http://127.0.0.1:${APORT[$n]}"
    NODES="$NODES --node node-$n=2xA100-40GB"
done
replica() { # replica a|b: (re)start it on its state
    local port=$pa; [ "$1" = a ] || port=$pb
    # shellcheck disable=SC2086
    POD_NAME=migschedd-$1 "$MIGSCHEDD" --listen "127.0.0.1:$port" --state-dir "$D/state-$1" --backend agent \
        $NODES $AGENTS --kube-api "$MS_K8S_API" --kube-token-file "$D/pki/extender.token" --kube-ca "$MS_K8S_CA" \
        --extender-ttl 10 --leader-elect --lease migsched/migschedd --lease-duration $LEASE --unowned-grace 30 \
        2>>"$D/migschedd-$1.log" &
    PID[$1]=$!
}
ready() { [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz")" = 200 ]; }
leader() { if ready "$pa"; then echo a; elif ready "$pb"; then echo b; fi; }
serving() { [ -n "$(leader)" ]; }

replica a
wait_until 60 ready "$pa" || fail "replica a never became the leader"
replica b
wait_until 30 curl -sf "http://127.0.0.1:$pb/healthz" || fail "replica b did not start"
ready "$pb" && fail "the standby is ready"

for n in 0 1 2; do ms_e2e_fake_node "node-$n" mig-1g.5gb=14 mig-2g.10gb=6 mig-3g.20gb=4 mig-7g.40gb=2; done
PROFILES=(1g.5gb 1g.5gb 2g.10gb 3g.20gb 7g.40gb)
npod=0
pod() { # pod PROFILE COUNT
    npod=$((npod + 1))
    api POST /api/v1/namespaces/default/pods "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",
      \"metadata\":{\"name\":\"c-$npod\"},
      \"spec\":{\"schedulerName\":\"migsched\",\"containers\":[{\"name\":\"c\",
        \"resources\":{\"limits\":{\"migsched.io/mig-$1\":\"$2\"}},\"image\":\"registry.invalid/none\"}]}}" >/dev/null
}
pods_json() { api GET /api/v1/namespaces/default/pods >"$D/pods.json"; }
# settled: the check holds and no pod is being bound (the bound count steady
# over 3 reads)
check() { pods_json && python3 "$here/chaos_check.py" "$D" "http://127.0.0.1:$p0" "http://127.0.0.1:$p1" \
    "http://127.0.0.1:$p2"; }

pending_explained() { # every pending pod: PodScheduled False with migsched's reason
    pods_json && python3 -c 'import json,sys
for p in json.load(open(sys.argv[1]))["items"]:
    if p["spec"].get("nodeName") or p["metadata"].get("deletionTimestamp"): continue
    c = [x for x in p["status"].get("conditions", []) if x["type"] == "PodScheduled"]
    if not c or c[0]["status"] != "False" or "migsched: " not in c[0].get("message", ""):
        print(p["metadata"]["name"], c); sys.exit(1)' "$D/pods.json"
}
kills=0 takeovers=0 worst=0
for r in $(seq 1 "$ROUNDS"); do
    # a burst: 4-8 pods, gangs of 2 among them
    nb=$((4 + RANDOM % 5))
    for i in $(seq 1 $nb); do
        if [ $((RANDOM % 6)) -eq 0 ]; then pod 7g.40gb 2; else pod "${PROFILES[$((RANDOM % ${#PROFILES[@]}))]}" 1; fi
    done
    # some pods deleted at random
    pods_json
    mapfile -t names < <(python3 -c 'import json,sys
print("\n".join(p["metadata"]["name"] for p in json.load(open(sys.argv[1]))["items"]))' "$D/pods.json")
    nd=$((RANDOM % 4))
    for i in $(seq 1 $nd); do
        [ ${#names[@]} -gt 0 ] || break
        api DELETE "/api/v1/namespaces/default/pods/${names[$((RANDOM % ${#names[@]}))]}?gracePeriodSeconds=0" \
            >/dev/null 2>&1 || true
    done
    # the fault, at a random moment within the burst's scheduling
    sleep "0.$((RANDOM % 10))"
    what=none
    case $((RANDOM % 4)) in
    0)  l=$(leader)
        if [ -n "$l" ]; then
            kill -KILL "${PID[$l]}"; wait "${PID[$l]}" 2>/dev/null || true
            tk=$(date +%s.%N); what="kill -9 leader $l"; kills=$((kills + 1))
            o=b; [ "$l" = a ] || o=a
            wait_until $((LEASE * 2 + 20)) ready "$([ $o = a ] && echo "$pa" || echo "$pb")" ||
                fail "round $r: replica $o did not take over after the leader's kill"
            took=$(python3 -c "import time; print('%.1f' % (time.time() - $tk))")
            python3 -c "import sys; sys.exit(0 if $took <= 2 * $LEASE + 10 else 1)" ||
                fail "round $r: the new leader served $took s after the kill (> 2 leases + the agents' reads)"
            worst=$(python3 -c "print(max($worst, $took))")
            takeovers=$((takeovers + 1))
            replica "$l"
        fi ;;
    1)  l=$(leader); s=b; [ "$l" != b ] || s=a
        kill -KILL "${PID[$s]}"; wait "${PID[$s]}" 2>/dev/null || true
        what="kill -9 standby $s"; kills=$((kills + 1))
        replica "$s" ;;
    2)  n=$((RANDOM % 3))
        kill -KILL "${PID[agent$n]}"; wait "${PID[agent$n]}" 2>/dev/null || true
        what="kill -9 agent node-$n"; kills=$((kills + 1))
        agent "$n" ;;
    esac
    wait_until 60 serving || fail "round $r: no replica serves"
    wait_until 120 check || { check || true; fail "round $r: the invariants do not hold (after $what)"; }
    # settle: the bound count steady for 3 reads (2 s), the check holding
    last=-1 same=0
    for i in $(seq 1 300); do
        line=$(check) || fail "round $r: $line (after $what)"
        b=$(echo "$line" | awk '{print $2}')
        if [ "$b" = "$last" ]; then same=$((same + 1)); else same=0; last=$b; fi
        [ $same -lt 3 ] || break
        sleep 0.7
    done
    wait_until 60 pending_explained || fail "round $r: a pending pod has no extender reason: $(pending_explained 2>&1)"
    echo "round $r: +$nb pods, -$nd, $what; $line; leader $(leader)"
done
echo "k8s chaos e2e: passed $ROUNDS rounds (seed $SEED, $kills kills, $takeovers takeovers, slowest $worst s) in $(( $(date +%s) - t0 )) s"
