#!/usr/bin/env bash
# bench-bind-wait.sh - how long a `--kube` bind takes when its instance is
# slow to make (docs/performance.md, "A bind's wait without naps"):
# migschedd with the sim backend and --op-delay D (an instance is two ops:
# 2 x D seconds), the API server a loopback port nobody listens on (each
# bind fails after its wait and rolls back, so the time is the wait plus a
# refused connection). N pods, one after another: a filter, then a bind,
# timed by curl. The floor is 2 x D; what is above it is the bind's own
# delay in noticing that its instance runs.
#
# Usage: scripts/bench-bind-wait.sh [N] [D]        (default 5 pods, 0.5 s)
#   MIGSCHEDD=path   the daemon (default: tests/service/lib.sh's choice)
# Prints one line per bind and a JSON summary. Benchmarks report figures;
# nothing here fails on a time.
set -eu
cd "$(dirname "$0")/.."
n=${1:-5}
delay=${2:-0.5}
. tests/service/lib.sh
svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/d" --node a=4xA100-40GB --op-delay "$delay" \
    --extender-ttl 60 --kube-api "http://127.0.0.1:$(free_port)"
times=()
for i in $(seq 1 "$n"); do
    pod="{\"metadata\":{\"name\":\"p-$i\",\"namespace\":\"default\",\"uid\":\"u$i\"},\"spec\":{\"containers\":[{\"name\":\"c\",\"resources\":{\"requests\":{\"migsched.io/mig-1g.5gb\":\"1\"}}}]}}"
    curl -sf -XPOST -H 'Content-Type: application/json' --data-binary "{\"Pod\":$pod,\"NodeNames\":[\"a\"]}" \
        "$B/extender/filter" >/dev/null
    t=$(curl -s -o /dev/null -w '%{time_total}' -XPOST -H 'Content-Type: application/json' \
        --data-binary "{\"PodName\":\"p-$i\",\"PodNamespace\":\"default\",\"PodUID\":\"u$i\",\"Node\":\"a\"}" \
        "$B/extender/bind")
    echo "bind $i: $t s (instance: $(python3 -c "print(2 * $delay)") s)"
    times+=("$t")
done
svc_stop
python3 - "$delay" "${times[@]}" <<'EOF'
import json, sys
d, t = float(sys.argv[1]), sorted(float(x) for x in sys.argv[2:])
print(json.dumps({"binds": len(t), "instance_s": 2 * d, "min_s": t[0], "median_s": t[len(t) // 2], "max_s": t[-1],
                  "median_over_instance_ms": round((t[len(t) // 2] - 2 * d) * 1000, 1)}))
EOF
