#!/usr/bin/env bash
# Backends and transports: dry-run logs every op it would perform as JSON
# lines (and they replay the job's life: create, start, stop, destroy);
# nvml without a driver is a clear error; bad options are refused with the option's
# name; TLS serves HTTPS when given a certificate; a config file works.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh

# dry-run
svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/dry" --backend dry-run --node a=1xA100-40GB
curl -sf -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" -d '{"id":"d1","profile":"3g"}' || fail "submit"
wait_for sh -c "curl -s $B/v1/jobs/d1 | jq -e '.state == \"running\"' >/dev/null" || fail "d1 never runs"
curl -sf -o /dev/null -XPOST "$B/v1/jobs/d1/done" || fail "done"
wait_for check_cluster || fail "dry-run view and inventory differ"
svc_stop
ops=$(jq -r '.op' "$SVC_TMP/dry/dry-run.jsonl" | tr '\n' ' ')
[ "$ops" = "create start stop destroy " ] || fail "dry-run ops: '$ops'"
jq -se 'map(select(.op == "start")) | length == 1 and .[0].job == "d1" and .[0].profile == "3g.20gb" and .[0].gpu == 0' \
    "$SVC_TMP/dry/dry-run.jsonl" >/dev/null || fail "dry-run start line"
grep -q '"msg":"dry-run op"' "$SVC_TMP/log" || fail "dry-run ops are not in the log"

# nvml without a driver: a clear error, non-zero exit (tests/cli/test_service_nvml.sh
# runs it against the fake driver)
MIGSCHEDD_NVML_LIB=$SVC_TMP/no-such-libnvidia-ml.so.1 "$MIGSCHEDD" --state-dir "$SVC_TMP/nv" \
    --backend nvml --node a=1xA100-40GB --listen 127.0.0.1:1 2>"$SVC_TMP/nv.err"
[ $? -ne 0 ] && grep -q 'backend nvml' "$SVC_TMP/nv.err" || fail "nvml: $(cat "$SVC_TMP/nv.err")"
# bad settings name the option (or the file and line)
for bad in "--lb-threshold 2" "--policy nope" "--node a=4xB999" "--time-scale 0" "--frobnicate 1"; do
    # shellcheck disable=SC2086
    "$MIGSCHEDD" --state-dir "$SVC_TMP/bad" $bad --node b=1xA100-40GB 2>"$SVC_TMP/bad.err" >/dev/null
    rc=$?
    [ "$rc" -ne 0 ] || fail "'$bad' accepted"
    opt=${bad%% *}; opt=${opt#--}
    grep -q -- "$opt" "$SVC_TMP/bad.err" || fail "'$bad': the error does not name it: $(cat "$SVC_TMP/bad.err")"
done
printf 'node = a=1xA100-40GB\nlb-threshold = 7\n' > "$SVC_TMP/bad.conf"
"$MIGSCHEDD" --state-dir "$SVC_TMP/bad" --config "$SVC_TMP/bad.conf" 2>"$SVC_TMP/bad.err"
grep -q 'bad.conf:2:' "$SVC_TMP/bad.err" || fail "config error without file:line: $(cat "$SVC_TMP/bad.err")"
"$MIGSCHEDD" --state-dir "$SVC_TMP/bad" --node a=1xA100-40GB --listen 10.1.2.3:7070 2>"$SVC_TMP/bad.err"
grep -q 'loopback' "$SVC_TMP/bad.err" || fail "a non-loopback listen address is not refused"

# a config file, and TLS when openssl can make a certificate
printf '# test\nstate-dir = %s\nnode = a=1xA100-40GB\npolicy = best-fit\n' "$SVC_TMP/conf" > "$SVC_TMP/good.conf"
if command -v openssl >/dev/null; then
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$SVC_TMP/key.pem" -out "$SVC_TMP/cert.pem" -days 1 \
        -subj /CN=127.0.0.1 >/dev/null 2>&1 || fail "openssl"
    # svc_start polls http://; poll https here instead
    port=$(free_port)
    "$MIGSCHEDD" --config "$SVC_TMP/good.conf" --listen 127.0.0.1:$port --tls-cert "$SVC_TMP/cert.pem" \
        --tls-key "$SVC_TMP/key.pem" 2>>"$SVC_TMP/tls.log" &
    SVC_PID=$!; SVC_PIDS+=("$SVC_PID"); SVC_LOG=$SVC_TMP/tls.log
    wait_for curl -skf -o /dev/null "https://127.0.0.1:$port/readyz" || fail "no HTTPS"
    curl -sk "https://127.0.0.1:$port/metrics" | grep -q 'policy="best-fit"' || fail "config file not applied"
    curl -s -o /dev/null "http://127.0.0.1:$port/healthz" && fail "plain HTTP answered on the TLS port"
    svc_stop
else
    skipped="no openssl: TLS not tested (scripts/deps/test/service.list)"
    svc_start "$SVC_TMP/conf.log" --config "$SVC_TMP/good.conf"
    curl -s "$B/metrics" | grep -q 'policy="best-fit"' || fail "config file not applied"
    svc_stop
fi
[ -z "${skipped:-}" ] || { echo "skip: $skipped"; exit 77; }
echo "test_service_backends: ok"
