#!/usr/bin/env bash
# The status page at / in headless Chromium: a job submitted through the API
# appears in the rendered page (the DOM after the page's first polls), and a
# screenshot is saved to $SVC_PAGE_OUT (default build-asan/tests/service-page.png).
# Without chromium the test says so and is skipped (exit 77; scripts/deps/test/service.list
# lists it so CI has it).
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then echo "skip: chromium is not installed (scripts/deps/test/service.list)"; exit 77; fi
OUT=${SVC_PAGE_OUT:-build-asan/tests/service-page.png}
mkdir -p "$(dirname "$OUT")"

svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/state" --node a=4xA100-40GB --node c=2xA100-40GB:timeslice=4 --op-delay 0
curl -sf -o /dev/null -XPOST -H 'Content-Type: application/json' "$B/v1/jobs" \
    -d '{"id":"page-job-1","profile":"3g.20gb","duration_s":3600}' || fail "submit"
wait_for sh -c "curl -s $B/v1/jobs/page-job-1 | jq -e '.state == \"running\"' >/dev/null" || fail "job never runs"
curl -s "$B/" | grep -q '<title>migschedd</title>' || fail "GET / is not the page"
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking
       --disable-component-update --disable-sync --disable-dev-shm-usage --user-data-dir="$SVC_TMP/chrome"
       --virtual-time-budget=5000)
timeout 60 "$CHROME" "${flags[@]}" --dump-dom "$B/" > "$SVC_TMP/dom.html" 2>"$SVC_TMP/chrome.log" || {
    tail -n 20 "$SVC_TMP/chrome.log"; fail "chromium --dump-dom failed"; }
grep -q 'page-job-1' "$SVC_TMP/dom.html" || { head -c 2000 "$SVC_TMP/dom.html"; fail "the job is not on the page"; }
grep -q 'FragCost' "$SVC_TMP/dom.html" || fail "no FragCost on the page"
timeout 60 "$CHROME" "${flags[@]}" --window-size=412,915 --screenshot="$OUT" "$B/" >/dev/null 2>>"$SVC_TMP/chrome.log" \
    || fail "chromium --screenshot failed"
[ -s "$OUT" ] || fail "no screenshot"
echo "screenshot: $OUT"
svc_stop
echo "test_service_page: ok"
