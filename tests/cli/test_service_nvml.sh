#!/usr/bin/env bash
# migschedd --backend nvml against the fake libnvidia-ml.so.1 (tests/nvml/):
# jobs get real GPU instances with the driver's MIG UUIDs, a finished job's
# instance is destroyed on the "hardware", a restart adopts what runs and
# destroys what no job owns, a placement the hardware refuses is rolled
# back, and a GPU of another model or with MIG off is refused at start-up.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
LIB=$(dirname "$MIGSCHEDD")/fake-nvml/libnvidia-ml.so.1
[ -f "$LIB" ] || fail "no fake NVML at $LIB (make tests builds it)"
export MIGSCHEDD_NVML_LIB=$LIB
export MS_FAKE_NVML_STATE=$SVC_TMP/hw
unset MS_FAKE_NVML_FAULTS
gis() { grep -c '^gi ' "$MS_FAKE_NVML_STATE" || true; }

# two A100s with MIG on; a 1g GI nobody owns is already there
printf 'gpu a100-40\ngi 1 19 6\ngpu a100-40\n' > "$MS_FAKE_NVML_STATE"
svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/s" --backend nvml --node a=2xA100-40GB --policy best-fit
wait_for check_cluster || fail "view and hardware differ at start"
# an idle GI is adopted as an idle GI of the view, not destroyed at start-up
[ "$(gis)" -eq 1 ] || fail "the idle GI did not stay: $(cat "$MS_FAKE_NVML_STATE")"
for j in j1 j2 j3; do
    curl -sf -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" \
        -d "{\"id\":\"$j\",\"profile\":\"3g.20gb\"}" || fail "submit $j"
done
wait_for sh -c "curl -s $B/v1/jobs?state=running | jq -e '.jobs | length == 3' >/dev/null" || fail "3 jobs never run"
[ "$(gis)" -eq 4 ] || fail "the hardware has $(gis) GIs, want 4 (3 jobs and the idle 1g)"
curl -s "$B/v1/jobs/j1" | jq -e '.placement.instance_uuid | startswith("MIG-")' >/dev/null \
    || fail "no MIG UUID from the driver: $(curl -s "$B/v1/jobs/j1")"
curl -s "$B/v1/jobs/j1" | jq -e '.placement.gpu_uuid | startswith("GPU-")' >/dev/null || fail "no GPU UUID"
curl -sf -o /dev/null -XPOST "$B/v1/jobs/j1/done" || fail "done"
# (j1's GI goes; the policy may take the idle 1g away too, as any idle GI of its view)
wait_for sh -c "[ \$(grep -c '^gi ' $MS_FAKE_NVML_STATE) -le 3 ]" || fail "j1's GI is still on the hardware: $(cat $MS_FAKE_NVML_STATE)"
wait_for check_cluster || fail "view and hardware differ"
svc_stop
before=$(gis)

# restart: j2 and j3 are adopted, nothing is created twice
svc_start "$SVC_TMP/log2" --state-dir "$SVC_TMP/s" --backend nvml --node a=2xA100-40GB --policy best-fit
wait_for check_cluster || fail "view and hardware differ after restart"
curl -s "$B/v1/jobs/j2" | jq -e '.state == "running"' >/dev/null || fail "j2 not adopted"
[ "$(gis)" -eq "$before" ] || fail "restart changed the hardware: $(gis) GIs, $before before"
# the hardware refuses the next create: the op fails, the job is not lost (a 2g: the
# idle 1g cannot serve it, so a GI is created)
export MS_FAKE_NVML_FAULTS=nvmlDeviceCreateGpuInstanceWithPlacement:1:23
svc_stop
svc_start "$SVC_TMP/log3" --state-dir "$SVC_TMP/s" --backend nvml --node a=2xA100-40GB --policy best-fit
curl -sf -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" -d '{"id":"j4","profile":"2g"}' \
    || fail "submit j4"
wait_for sh -c "curl -s $B/v1/jobs/j4 | jq -e '.state == \"running\"' >/dev/null" || fail "j4 never runs after a refused create"
wait_for check_cluster || fail "view and hardware differ after a refused create"
svc_stop
unset MS_FAKE_NVML_FAULTS

# start-up refusals: another model, MIG off on a MIG node
printf 'gpu h100-80\ngpu a100-40\n' > "$MS_FAKE_NVML_STATE"
"$MIGSCHEDD" --state-dir "$SVC_TMP/x" --backend nvml --node a=2xA100-40GB --listen 127.0.0.1:1 2>"$SVC_TMP/e1"
[ $? -ne 0 ] && grep -q 'GPU 0 is a .*H100' "$SVC_TMP/e1" || fail "wrong model accepted: $(cat "$SVC_TMP/e1")"
printf 'gpu a100-40 mig=0\n' > "$MS_FAKE_NVML_STATE"
"$MIGSCHEDD" --state-dir "$SVC_TMP/y" --backend nvml --node a=1xA100-40GB --listen 127.0.0.1:1 2>"$SVC_TMP/e2"
[ $? -ne 0 ] && grep -q 'MIG is disabled' "$SVC_TMP/e2" || fail "MIG off accepted: $(cat "$SVC_TMP/e2")"
grep -q '^gpu a100-40 mig=0' "$MS_FAKE_NVML_STATE" || fail "MIG mode was changed"
echo "test_service_nvml: ok"
