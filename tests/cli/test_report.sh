#!/usr/bin/env bash
# `migsched report` end to end: the runs `migsched experiment --quick`
# writes (metrics, schedule, trace -> metrics table, utilisation, FragCost
# over time, wait CDF, Gantt), an fgd-experiment JSON made from a tiny pod
# and node file (-> unallocated vs arrived plot, table beside the published
# numbers), an import-alibaba --fill JSON, and clear errors on bad input.
set -eu
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
svg_ok() {
    [ -s "$1" ] || fail "missing $1"
    head -c 5 "$1" | grep -q '^<svg ' || fail "$1 does not start with <svg"
    [ "$(tail -n1 "$1")" = "</svg>" ] || fail "$1 does not end with </svg>"
}

# --- runs ---------------------------------------------------------------
"$M" experiment --quick --out "$tmp/x" >/dev/null 2>&1 || fail "experiment --quick"
"$M" report --runs "$tmp/x/runs/faplus-medium,$tmp/x/runs/static-medium" --out "$tmp/r" \
    >"$tmp/out.txt" || fail "report --runs"
grep -q '2 run(s), 0 fgd, 0 fill' "$tmp/out.txt" || fail "summary line: $(cat "$tmp/out.txt")"
for f in compare utilisation fragcost_time wait_cdf gantt_1-faplus-medium gantt_2-static-medium; do
    svg_ok "$tmp/r/$f.svg"
done
[ "$(grep -c 'class="series"' "$tmp/r/fragcost_time.svg")" -eq 2 ] || fail "FragCost series"
[ "$(grep -c '<polyline' "$tmp/r/wait_cdf.svg")" -ge 2 ] || fail "wait CDF lines"
head -n1 "$tmp/r/waits.csv" | grep -q '^run,policy,wait_s,cdf$' || fail "waits.csv header"
# every job of the quick trace (60) started in both runs; the CDF ends at 1
[ "$(grep -c '^1-faplus-medium,fa+,' "$tmp/r/waits.csv")" -eq 60 ] || fail "fa+ waits"
[ "$(grep -c '^2-static-medium,static,' "$tmp/r/waits.csv")" -eq 60 ] || fail "static waits"
grep -q '^1-faplus-medium,fa+,[0-9.]*,1.000000$' "$tmp/r/waits.csv" || fail "CDF does not end at 1"
awk -F, 'NR > 1 && $3 < 0 { bad = 1 } END { exit bad }' "$tmp/r/waits.csv" || fail "negative wait"
grep -q '^1-faplus-medium,fa+,fragcost,' "$tmp/r/timeseries.csv" || fail "timeseries fragcost"
grep -q '^2-static-medium,static,utilisation,' "$tmp/r/timeseries.csv" || fail "timeseries util"
awk -F, '$3 == "fragcost" && ($5 < 0 || $5 > 1) { bad = 1 } END { exit bad }' \
    "$tmp/r/timeseries.csv" || fail "FragCost out of [0, 1]"
for s in '## Runs' '### FragCost over time' '### Wait times' '| fa+ | 60 |' 'FragCost (sched)'; do
    grep -qF "$s" "$tmp/r/README.md" || fail "README lacks '$s'"
done
# the metrics-only form still works
"$M" report --metrics "$tmp/x/runs/faplus-medium/metrics.json" --out "$tmp/m" >/dev/null \
    || fail "report --metrics"
[ -s "$tmp/m/metrics.csv" ] || fail "metrics.csv"

# --- fgd-experiment JSON from a tiny cluster ----------------------------
cat >"$tmp/nodes.csv" <<'EOF'
sn,cpu_milli,memory_mib,gpu,model
n0,64000,262144,4,V100M16
n1,64000,262144,4,V100M16
n2,96000,393216,8,G2
EOF
{
    echo "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time"
    for i in $(seq 0 29); do
        case $((i % 5)) in
            0) g="1,1000" ;; 1) g="1,500" ;; 2) g="1,250" ;; 3) g="2,1000" ;; *) g="0,0" ;;
        esac
        printf 'pod-%02d,4000,8192,%s,,LS,Running,%d,%d,%d\n' "$i" "$g" "$i" "$((i + 100))" "$i"
    done
} >"$tmp/openb_pod_list_tiny.csv"
"$M" fgd-experiment --pods "$tmp/openb_pod_list_tiny.csv" --nodes "$tmp/nodes.csv" \
    --policy all --seeds 1-2 --json "$tmp/tiny.json" >/dev/null || fail "fgd-experiment"
# a copy named like the default trace gets the published column
sed 's#openb_pod_list_tiny#openb_pod_list_default#' "$tmp/tiny.json" >"$tmp/dflt.json"
"$M" report --fgd "$tmp/tiny.json,$tmp/dflt.json" --out "$tmp/f" >/dev/null || fail "report --fgd"
for f in fgd_1-tiny fgd_1-tiny_zoom fgd_2-default fgd_2-default_zoom; do svg_ok "$tmp/f/$f.svg"; done
[ "$(grep -c 'class="series"' "$tmp/f/fgd_1-tiny.svg")" -eq 6 ] || fail "fgd: want 6 policies"
head -n1 "$tmp/f/fgd_table.csv" | grep -q '^trace,policy,seeds,ours_mean,ours_sd,published,' \
    || fail "fgd_table.csv header"
[ "$(grep -c '^tiny,' "$tmp/f/fgd_table.csv")" -eq 6 ] || fail "fgd_table: tiny rows"
grep -q '^tiny,fgd,2,[0-9.]*,[0-9.]*,,,,$' "$tmp/f/fgd_table.csv" || fail "tiny has no published"
grep -q '^default,fgd,2,[0-9.]*,[0-9.]*,4.77,0.10,-\?[0-9.]*,[01]$' "$tmp/f/fgd_table.csv" \
    || fail "default fgd row: $(grep '^default,fgd' "$tmp/f/fgd_table.csv")"
grep -q '^default,random,2,.*,13.70,0.31,' "$tmp/f/fgd_table.csv" || fail "default random row"
grep -qF '| default | 2 |' "$tmp/f/README.md" || fail "side-by-side table"
grep -qF 'Of the 6 cells with a published value' "$tmp/f/README.md" || fail "summary sentence"

# --- import-alibaba --fill JSON -----------------------------------------
"$M" import-alibaba --fill --pods "$tmp/openb_pod_list_tiny.csv" --gpus 8 --gpus-per-node 4 \
    --policy all --seeds 1-2 --json "$tmp/fill.json" >/dev/null 2>&1 || fail "import --fill"
"$M" report --fill "$tmp/fill.json" --fgd "$tmp/tiny.json" --out "$tmp/l" >/dev/null \
    || fail "report --fill"
svg_ok "$tmp/l/fill_1-tiny-compute_compute.svg"
svg_ok "$tmp/l/fill_1-tiny-compute_gpu.svg"
grep -q '^tiny,compute,A100-40GB,8,2,fa,' "$tmp/l/fill_table.csv" || fail "fill_table fa row"
grep -q '^tiny,compute,fgd,130,' "$tmp/l/fill_curves.csv" || fail "fill curve to 130 %"
grep -qF '## MIG fill experiment' "$tmp/l/README.md" || fail "fill section"

# --- errors name the file and the key ------------------------------------
grep -v '"arrived_pct"' "$tmp/tiny.json" >"$tmp/bad.json"
if "$M" report --fgd "$tmp/bad.json" --out "$tmp/b" 2>"$tmp/err.txt"; then fail "bad fgd accepted"; fi
grep -q 'bad.json:[0-9]*: field .policies\[0\].arrived_pct.: missing key' "$tmp/err.txt" \
    || fail "error: $(cat "$tmp/err.txt")"
if "$M" report --fill "$tmp/tiny.json" --out "$tmp/b" 2>"$tmp/err.txt"; then fail "fgd as fill"; fi
grep -q "tiny.json:.*policies\[0\].at_100" "$tmp/err.txt" || fail "error: $(cat "$tmp/err.txt")"
if "$M" report --out "$tmp/b" 2>/dev/null; then fail "no input accepted"; fi
echo "ok"
