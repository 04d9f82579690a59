#!/usr/bin/env bash
# End to end: `migsched experiment --quick` writes its report (Markdown, CSV
# with one row per policy and load, SVG plots, two full runs), the same run
# twice gives the same numbers, and `migsched report` turns the runs it wrote
# into a report of its own.
set -eu
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

"$M" experiment --quick --out "$tmp/x" > "$tmp/out.txt" 2> "$tmp/err.txt" \
    || { cat "$tmp/err.txt" >&2; fail "experiment --quick"; }
grep -q '^policy' "$tmp/out.txt" || fail "no table on stdout"
grep -q '^recommended: lb threshold t = ' "$tmp/out.txt" || fail "no recommendation"
[ -s "$tmp/err.txt" ] && fail "stderr is not a terminal but got output: $(head -c 200 "$tmp/err.txt")"

for f in README.md summary.csv runs.csv sweep_t.csv sweep_beta.csv sweep_migration.csv; do
    [ -s "$tmp/x/$f" ] || fail "missing $f"
done
for f in makespan wait exec fragcost_time gantt_faplus_medium wait_cdf_medium wait_cdf_high \
         sweep_t_makespan sweep_t_wait sweep_t_fragcost sweep_t_slowdown sweep_beta \
         sweep_migration; do
    s="$tmp/x/$f.svg"
    [ -s "$s" ] || fail "missing $f.svg"
    head -c 5 "$s" | grep -q '^<svg ' || fail "$f.svg does not start with <svg"
    [ "$(tail -n1 "$s")" = "</svg>" ] || fail "$f.svg does not end with </svg>"
done
grep -q 'class="seg"' "$tmp/x/gantt_faplus_medium.svg" || fail "Gantt has no segments"
[ "$(grep -c 'class="bar"' "$tmp/x/makespan.svg")" -eq 33 ] || fail "makespan bars: want 11 policies x 3 loads"

# summary.csv: header + one row per policy and load (11 x 3: fa+, the headline,
# and the ablation with fa, the faithful reproduction, and the baselines)
head -n1 "$tmp/x/summary.csv" | grep -q '^policy,load_name,load,seeds,makespan_s' || fail "summary header"
[ "$(tail -n +2 "$tmp/x/summary.csv" | wc -l)" -eq 33 ] || fail "summary rows"
for p in fa+ static fa-lb fa-lb-dp fa first-fit best-fit fgd mfi node-profile timeslice; do
    for l in low medium high; do
        [ "$(grep -c "^$p,$l," "$tmp/x/summary.csv")" -eq 1 ] || fail "summary: $p/$l"
    done
done
# runs.csv: one row per policy, load and seed (2 seeds in --quick)
[ "$(tail -n +2 "$tmp/x/runs.csv" | wc -l)" -eq 66 ] || fail "runs rows"
# no NaN where a number belongs in the main table
awk -F, 'NR > 1 && ($5 == "nan" || $5 == "-nan" || $5 + 0 <= 0) { exit 1 }' "$tmp/x/summary.csv" \
    || fail "a makespan is missing"
grep -q 'Recommended deployment parameters' "$tmp/x/README.md" || fail "README lacks recommendations"
grep -q '| lb threshold t |' "$tmp/x/README.md" || fail "README lacks t"

# deterministic: the same command gives the same CSV
"$M" experiment --quick --out "$tmp/y" > /dev/null
cmp -s "$tmp/x/summary.csv" "$tmp/y/summary.csv" || fail "summary.csv differs between runs"
cmp -s "$tmp/x/runs/faplus-medium/schedule.csv" "$tmp/y/runs/faplus-medium/schedule.csv" \
    || fail "schedule differs between runs"

# report: from the runs the experiment wrote
for r in faplus-medium static-medium; do
    for f in trace.csv schedule.csv metrics.json; do
        [ -s "$tmp/x/runs/$r/$f" ] || fail "missing runs/$r/$f"
    done
done
"$M" report --runs "$tmp/x/runs/faplus-medium,$tmp/x/runs/static-medium" --out "$tmp/r" > /dev/null \
    || fail "report --runs"
for f in README.md metrics.csv compare.svg utilisation.svg gantt_1-faplus-medium.svg \
         gantt_2-static-medium.svg; do
    [ -s "$tmp/r/$f" ] || fail "report: missing $f"
done
[ "$(tail -n +2 "$tmp/r/metrics.csv" | wc -l)" -eq 2 ] || fail "report: metrics rows"
grep -q '^1-faplus-medium,fa+,' "$tmp/r/metrics.csv" || fail "report: policy name"
"$M" report --metrics "$tmp/x/runs/faplus-medium/metrics.json" --out "$tmp/r2" > /dev/null \
    || fail "report --metrics"
[ -s "$tmp/r2/README.md" ] || fail "report --metrics: README"

# errors: a missing run is an error naming the file; bad options are usage errors
if "$M" report --runs "$tmp/nope" --out "$tmp/r3" 2> "$tmp/e.txt"; then fail "missing run accepted"; fi
grep -q 'nope/metrics.json' "$tmp/e.txt" || fail "error does not name the file"
set +e
"$M" report --out "$tmp/r4" 2> /dev/null; rc=$?
[ "$rc" -eq 2 ] || fail "report without runs: exit $rc, want 2"
"$M" experiment --seeds 0 2> /dev/null; rc=$?
[ "$rc" -eq 2 ] || fail "experiment --seeds 0: exit $rc, want 2"
set -e
echo ok
