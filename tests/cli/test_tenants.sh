#!/usr/bin/env bash
# Tenants through the real `migsched simulate` (docs/tenants.md): a trace
# with a tenant column and --tenant runs, its metrics name each tenant, the
# limit holds (max_usage), and `report` still reads the metrics; a trace
# without the column gives the metrics of before; a bad --tenant is a usage
# error naming the option, a bad tenant in a trace an input error naming
# file, line and field.
set -eu
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$M" gen-trace --jobs 600 --load 1.5 --gpus 4 --dist lognormal --mean 300 --seed 3 \
    -o "$tmp/t.csv" >/dev/null
awk -F, 'NR==1{print $0",tenant";next}{print $0","(NR%2?"a":"b")}' "$tmp/t.csv" > "$tmp/ab.csv"
"$M" simulate --trace "$tmp/ab.csv" --gpus 4 --tenant a:weight=2,limit=14 --tenant b \
    --out "$tmp/run" --quiet || fail "simulate with tenants"
m="$tmp/run/metrics.json"
grep -q '"ntenants": 3' "$m" || fail "ntenants: $(grep ntenants "$m")"
grep -q '"tenant1_name": "a"' "$m" || fail "tenant a is not tenant 1"
grep -q '"tenant1_limit": 14' "$m" || fail "a's limit"
max=$(sed -n 's/.*"tenant1_max_usage": \([0-9]*\).*/\1/p' "$m")
[ -n "$max" ] && [ "$max" -le 14 ] && [ "$max" -ge 7 ] || fail "a held $max slices (limit 14)"
grep -q '"jain_index": ' "$m" || fail "no jain_index"
grep -q '"jobs_completed": 600' "$m" || fail "not every job completed"
head -n1 "$tmp/run/trace.csv" | grep -q ',tenant$' || fail "the trace copy lost its tenant column"
"$M" report --runs "$tmp/run" --out "$tmp/rep" >/dev/null 2>&1 || fail "report cannot read the metrics"
# report's tenants.csv: a row per tenant with jobs, the metrics' figures
head -n1 "$tmp/rep/tenants.csv" | grep -q '^run,tenant,weight,guarantee,limit,jobs,' ||
    fail "tenants.csv header: $(head -n1 "$tmp/rep/tenants.csv" 2>&1)"
[ "$(tail -n +2 "$tmp/rep/tenants.csv" | wc -l)" -eq 2 ] || fail "tenants.csv rows"
awk -F, -v max="$max" '$2 == "a" { ok = $3 == 2 && $5 == 14 && $6 == 300 && $10 == max }
    END { exit !ok }' "$tmp/rep/tenants.csv" || fail "tenants.csv a: $(grep ',a,' "$tmp/rep/tenants.csv")"
jain=$(sed -n 's/.*"jain_index": \([0-9.]*\).*/\1/p' "$m")
awk -F, -v j="$jain" '$2 == "b" { ok = $4 == 0 && $5 == -1 && ($14 - j) ^ 2 < 1e-10 }
    END { exit !ok }' "$tmp/rep/tenants.csv" || fail "tenants.csv b: $(grep ',b,' "$tmp/rep/tenants.csv")"
# the per-hour Jain's index: its minimum in tenants.csv (empty for null),
# one row an hour in jain_hourly.csv; the reclaim columns (no guarantee:
# none)
hours=$(sed -n 's/.*"jain_hours": \([0-9]*\).*/\1/p' "$m")
hmin=$(sed -n 's/.*"jain_hourly_min": \([0-9.]*\).*/\1/p' "$m")
[ -n "$hours" ] && [ "$hours" -ge 1 ] || fail "jain_hours: $(grep jain_hours "$m")"
[ "$(tail -n +2 "$tmp/rep/jain_hourly.csv" | wc -l)" -eq "$hours" ] || fail "jain_hourly.csv rows"
awk -F, -v h="$hmin" '$2 == "b" { ok = (h == "" ? $15 == "" : ($15 - h) ^ 2 < 1e-10) &&
    $16 == 0 && $17 == 0 && $18 == "" && $19 == "" } END { exit !ok }' "$tmp/rep/tenants.csv" ||
    fail "tenants.csv b, per hour and reclaim: $(grep ',b,' "$tmp/rep/tenants.csv") (min $hmin)"
# each tenant's share of each hour (tenantK_share_hourH, one per hour,
# in [0, 1]) and report's plot of them: per tenant with jobs a solid line
# of a point an hour and its weight's target dashed (a: 2 / 3)
for k in 0 1 2; do
    [ "$(grep -c "\"tenant${k}_share_hour[0-9]*\": " "$m")" -eq "$hours" ] ||
        fail "tenant$k's hourly shares: $(grep -c "tenant${k}_share_hour" "$m") for $hours hours"
done
awk -F'[:,]' '/"tenant[12]_share_hour/ { if ($2 < 0 || $2 > 1) bad = 1 } END { exit bad }' "$m" ||
    fail "a share outside [0, 1]"
s=$(ls "$tmp"/rep/share_*.svg 2>/dev/null)
[ "$(echo "$s" | wc -w)" -eq 1 ] || fail "share plots: $(ls "$tmp/rep")"
head -c 5 "$s" | grep -q '^<svg ' && [ "$(tail -n1 "$s")" = "</svg>" ] || fail "$s is not an SVG"
[ "$(grep -c '<polyline class="series"' "$s")" -eq 4 ] || fail "share plot: not 2 lines and 2 targets"
[ "$(grep '<polyline' "$s" | grep -c 'stroke-dasharray')" -eq 2 ] || fail "share plot: targets not dashed"
grep '<polyline' "$s" | grep -v dasharray | awk -v h="$hours" '{ n = gsub(/,/, ","); if (n != h) bad = 1 }
    END { exit bad }' || fail "share plot: not a point an hour"
grep -q '>a target</text>' "$s" || fail "share plot: no legend for a's target"

"$M" simulate --trace "$tmp/t.csv" --gpus 4 --metrics-out "$tmp/plain.json" --quiet
"$M" report --metrics "$tmp/plain.json" --out "$tmp/rep0" >/dev/null 2>&1 || fail "report without tenants"
[ -e "$tmp/rep0/tenants.csv" ] && fail "tenants.csv for a run without tenants"
grep -q tenant "$tmp/plain.json" && fail "tenant keys without tenants"

set +e
"$M" simulate --trace "$tmp/ab.csv" --gpus 4 --tenant 'a:colour=red' >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "a bad --tenant exits $rc, not 2"
grep -q -- "--tenant: 'a:colour=red': unknown key 'colour'" "$tmp/err" || fail "message: $(cat "$tmp/err")"
printf 'job_id,arrival_s,profile,duration_s,tenant\nx,0,1g,5,ok\ny,1,1g,5,no/slash\n' > "$tmp/bad.csv"
set +e
"$M" simulate --trace "$tmp/bad.csv" --gpus 1 >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 1 ] || fail "a bad tenant name exits $rc, not 1"
grep -q "bad.csv:3: field 'tenant': 'no/slash'" "$tmp/err" || fail "message: $(cat "$tmp/err")"
# a job larger than its tenant's limit (y: a 7g, a may hold 3 slices; z:
# a 4g.20gb, b may hold 10 GB) runs as given, waiting to the end, and one
# warning line on stderr (--quiet too) gives the count and the first
printf 'job_id,arrival_s,profile,duration_s,tenant\nx,0,1g,5,a\ny,1,7g,5,a\nz,2,4g.20gb,5,b\nw,3,1g,5,b\n' > "$tmp/over.csv"
"$M" simulate --trace "$tmp/over.csv" --gpus 1 --tenant a:limit=3 --tenant b:mem-limit=10 \
    --metrics-out "$tmp/over.json" --quiet 2>"$tmp/err" || fail "simulate with a job over its limit"
[ "$(wc -l < "$tmp/err")" = 1 ] || fail "over the limit: not one line: $(cat "$tmp/err")"
grep -q "warning: 2 jobs larger than their tenant's limit never started (the first, y: tenant 'a' may hold 3 compute slices (limit) and the job needs 7" "$tmp/err" ||
    fail "over the limit: $(cat "$tmp/err")"
grep -q '"jobs_completed": 2,' "$tmp/over.json" || fail "over the limit: $(grep jobs_ "$tmp/over.json")"
"$M" simulate --trace "$tmp/over.csv" --gpus 1 --tenant a:limit=7 --tenant b --quiet 2>"$tmp/err"
[ ! -s "$tmp/err" ] || fail "a warning within the limits: $(cat "$tmp/err")"
# preemption (docs/tenants.md, "Preemption"): a 7g of priority 0 runs; two
# 1g of priority 5 arrive; with --preempt the first stops the 7g (queued
# again, it runs its full 1000 s after them) and neither waits
printf 'job_id,arrival_s,profile,duration_s,priority\n0,0,7g.40gb,1000,0\n1,100,1g.5gb,50,5\n2,110,1g.5gb,50,5\n' \
    > "$tmp/pre.csv"
"$M" simulate --trace "$tmp/pre.csv" --gpus 1 --metrics-out "$tmp/p0.json" --quiet
grep -q '"preemptions": 0,' "$tmp/p0.json" || fail "preemptions without --preempt"
"$M" simulate --trace "$tmp/pre.csv" --gpus 1 --preempt --preempt-grace 0 \
    --metrics-out "$tmp/p1.json" --schedule-out "$tmp/p1.csv" --quiet || fail "simulate --preempt"
grep -q '"preemptions": 1,' "$tmp/p1.json" || fail "preemptions: $(grep preemptions "$tmp/p1.json")"
grep -q '"prio0_priority": 5,' "$tmp/p1.json" || fail "no per-priority waits"
grep -q '"prio0_p99_wait_s": 0.000000' "$tmp/p1.json" || fail "the 1g waited: $(grep prio0_p99 "$tmp/p1.json")"
grep -q '"jobs_completed": 3' "$tmp/p1.json" || fail "a preempted job was lost"
"$M" check --trace "$tmp/pre.csv" --schedule "$tmp/p1.csv" --gpus 1 >/dev/null 2>&1 ||
    fail "the preempted schedule does not pass migsched check"
"$M" simulate --trace "$tmp/pre.csv" --gpus 1 --preempt --preempt-grace 2000 \
    --metrics-out "$tmp/p2.json" --quiet
grep -q '"preemptions": 0,' "$tmp/p2.json" || fail "a victim within its grace"
set +e
"$M" simulate --trace "$tmp/pre.csv" --gpus 1 --preempt-rate -1 >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] || fail "a bad --preempt-rate exits $rc, not 2"

# --tenant-half-life: 0 is no option (the same schedule); a value runs; a
# bad one exits 2 naming it
"$M" simulate --trace "$tmp/ab.csv" --gpus 4 --tenant a:weight=2 --schedule-out "$tmp/h0.csv" --quiet
"$M" simulate --trace "$tmp/ab.csv" --gpus 4 --tenant a:weight=2 --tenant-half-life 0 \
    --schedule-out "$tmp/h1.csv" --quiet
cmp -s "$tmp/h0.csv" "$tmp/h1.csv" || fail "--tenant-half-life 0 changed the schedule"
"$M" simulate --trace "$tmp/ab.csv" --gpus 4 --tenant a:weight=2 --tenant-half-life 600 \
    --metrics-out "$tmp/h2.json" --quiet || fail "--tenant-half-life 600"
grep -q '"jobs_completed": 600' "$tmp/h2.json" || fail "half-life: not every job completed"
set +e
"$M" simulate --trace "$tmp/ab.csv" --gpus 4 --tenant-half-life -5 >/dev/null 2>"$tmp/err"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'tenant-half-life' "$tmp/err" || fail "a bad --tenant-half-life: rc $rc, $(cat "$tmp/err")"

# the zoo's tenant workloads: each job carries its tenant, the tenants are
# declared with their weights, and zoo.csv has Jain's index and the first
# tenant's share: a (weight 2) near two thirds, everyone served
"$M" zoo --only weights-2to1-8xA100,sla-2batch-8xA100,reclaim-8xA100,equal-8xA100 --seeds 2 \
    --variants fa+ --out "$tmp/zoo" --traces "$tmp/zt" >/dev/null 2>&1 || fail "zoo with tenant workloads"
head -n1 "$tmp/zoo/zoo.csv" | grep -q ',jain,jain_ci95,t1_share,t1_share_ci95,t1_p99_wait_s,' ||
    fail "zoo.csv lacks the tenant columns: $(head -n1 "$tmp/zoo/zoo.csv")"
awk -F, '$1 == "weights-2to1-8xA100" { ok = $20 >= 0.95 && $22 > 0.6 && $22 < 0.7 }
         END { exit !ok }' "$tmp/zoo/zoo.csv" ||
    fail "weights 2:1 in the zoo: $(grep weights-2to1 "$tmp/zoo/zoo.csv")"
awk -F, '$1 == "sla-2batch-8xA100" { ok = $20 > 0 && $22 > 0 }
         END { exit !ok }' "$tmp/zoo/zoo.csv" || fail "no tenant metrics for the SLA workload"
awk -F, '$1 == "seed-4xA100" { bad = $20 != 0 } END { exit bad }' "$tmp/zoo/zoo.csv"
# the per-hour index, reclaim and second share columns: equal tenants near
# half each and fair hour by hour; ret (guarantee 28) reclaims
head -n1 "$tmp/zoo/zoo.csv" | grep -q ',jain_hourly_min,jain_hourly_min_ci95,t1_reclaim_max_s,t1_reclaim_max_s_ci95,t1_reclaim_mean_s,t1_reclaim_mean_s_ci95,t2_share,' ||
    fail "zoo.csv lacks the per-hour and reclaim columns: $(head -n1 "$tmp/zoo/zoo.csv")"
awk -F, '$1 == "equal-8xA100" { ok = $26 >= 0.9 && $22 > 0.45 && $22 < 0.55 && $32 > 0.45 && $32 < 0.55 }
         END { exit !ok }' "$tmp/zoo/zoo.csv" || fail "equal tenants in the zoo: $(grep equal-8xA100 "$tmp/zoo/zoo.csv")"
awk -F, '$1 == "reclaim-8xA100" { ok = $28 > 0 && $30 > 0 && $30 <= $28 } END { exit !ok }' "$tmp/zoo/zoo.csv" ||
    fail "no reclaim on reclaim-8xA100: $(grep reclaim-8xA100 "$tmp/zoo/zoo.csv")"
# --traces: a run of the zoo again with simulate, the same makespan
[ -s "$tmp/zt/weights-2to1-8xA100-2.csv" ] || fail "zoo --traces wrote no weights-2to1-8xA100-2.csv"
"$M" simulate --trace "$tmp/zt/weights-2to1-8xA100-2.csv" --gpus 8 --tenant a:weight=2 --tenant b \
    --metrics-out "$tmp/zt.json" >/dev/null || fail "simulate a zoo trace"
want=$(awk -F, '$1 == "weights-2to1-8xA100" && $2 == "fa+" && $3 == 2 { print $4 }' "$tmp/zoo/zoo_runs.csv")
got=$(sed -n 's/.*"makespan_s": \([0-9.]*\).*/\1/p' "$tmp/zt.json" | awk '{ printf "%.3f", $1 }')
[ -n "$want" ] && [ "$got" = "$want" ] || fail "the zoo's trace simulated again: makespan $got, the zoo's $want"
echo "test_tenants: ok (a held at most $max of its 14 slices)"
