#!/usr/bin/env bash
# Tenants in migschedd (docs/tenants.md, "migschedd"; issue 24, item 4):
# declared in the config file and with --tenant (errors name the file, line
# and field), `tenant` on POST /v1/jobs (422 for one not declared), a limit
# held on the real daemon (a limited tenant's job waits while another
# tenant's runs), GET /v1/tenants equal to what the jobs imply, the
# per-tenant series of /metrics (promtool), SIGHUP reloads (a good file
# applies, a bad one keeps the old set), a restart keeps each job's tenant,
# a store of schema 1 is migrated, a memory limit (mem-limit) holds
# (with a memory guarantee, mem-guarantee, shown beside it), and so does a
# per model limit (limit@MODEL), reloaded by SIGHUP; a per model guarantee
# (guarantee@MODEL) from the file is shown by /v1/tenants and /metrics.
set -u
cd "$(dirname "$0")/../.."
. tests/service/lib.sh
M=${MIGSCHED:-build-asan/migsched}

post() { curl -s -o "$SVC_TMP/out" -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d "$1" "$B/v1/jobs"; }
state() { curl -sf "$B/v1/jobs/$1" | jq -r .state; }
# is ID STATE: for wait_for, which runs its command again each try (a
# "$(state ID)" in its arguments would be read once, before the first)
is() { [ "$(state "$1")" = "$2" ]; }
reloads() { [ "$(grep -c '"SIGHUP: tenants reloaded"' "$SVC_TMP/log")" = "$1" ]; }
tenants() { curl -sf "$B/v1/tenants"; }
tfield() { tenants | jq -r --arg n "$1" ".tenants[] | select(.name == \$n) | .$2"; }

# --- bad declarations: the file, the line and the field ------------------
bad() {   # EXPECTED-TEXT ARGS...
    local want=$1
    shift
    "$MIGSCHEDD" --state-dir "$SVC_TMP/bad" --node a=1xA100-40GB "$@" 2>"$SVC_TMP/err" >/dev/null
    [ $? -eq 2 ] || fail "'$*' accepted"
    grep -qF -- "$want" "$SVC_TMP/err" || fail "'$*': want '$want', got: $(cat "$SVC_TMP/err")"
}
printf 'node = a=1xA100-40GB\ntenant = team a:weight=1\n' > "$SVC_TMP/bad1.conf"
bad "bad1.conf:2: tenant: 'team a:weight=1': a tenant's name is letters" --config "$SVC_TMP/bad1.conf"
printf '# tenants\n\ntenant = t1:guarantee=4,limit=2\n' > "$SVC_TMP/bad2.conf"
bad "bad2.conf:3: tenant: 't1:guarantee=4,limit=2': limit below the guarantee" --config "$SVC_TMP/bad2.conf"
bad "--tenant: 't1:weight=0': weight must be a number in (0, 1e6]" --tenant t1:weight=0
bad "--tenant: 't1:cap=3': unknown key 'cap'" --tenant=t1:cap=3
bad "--tenant needs a value" --tenant

# --- four 7-slice GPUs (room for every job; only quotas hold one back) -
# teamA may hold 3 slices at most
conf=$SVC_TMP/m.conf
cat > "$conf" <<'EOF'
node = a=4xA100-40GB
op-delay = 0
tenant = teamA:weight=1,guarantee=2,limit=3
tenant = teamB:weight=2
tenant-half-life = 600
EOF
svc_start "$SVC_TMP/log" --state-dir "$SVC_TMP/s" --config "$conf" --tenant teamC:limit=1
# the file's tenant-half-life reaches the scheduler (GET /v1/tenants reads it there)
[ "$(tenants | jq .half_life_s)" = 600 ] || fail "half-life not 600: $(tenants)"

# 422 for a tenant not declared, 400 for a name that cannot be one
[ "$(post '{"id":"x1","profile":"1g","tenant":"nobody"}')" = 422 ] || fail "undeclared tenant: $(cat "$SVC_TMP/out")"
jq -e '.error.field == "tenant"' "$SVC_TMP/out" >/dev/null || fail "422 does not name the field: $(cat "$SVC_TMP/out")"
[ "$(post '{"id":"x2","profile":"1g","tenant":"a b"}')" = 400 ] || fail "bad tenant name not 400"
[ "$(post '{"id":"x3","profile":"1g","tenant":7}')" = 400 ] || fail "tenant 7 not 400"

# the limit holds: a2 would take teamA to 4 > 3 and waits; b1, submitted
# after it, runs beside a1
[ "$(post '{"id":"a1","profile":"2g","duration_s":3600,"tenant":"teamA"}')" = 201 ] || fail "a1: $(cat "$SVC_TMP/out")"
[ "$(post '{"id":"a2","profile":"2g","duration_s":3600,"tenant":"teamA"}')" = 201 ] || fail "a2"
[ "$(post '{"id":"b1","profile":"3g","duration_s":3600,"tenant":"teamB"}')" = 201 ] || fail "b1"
[ "$(post '{"id":"c1","profile":"1g","duration_s":3600,"tenant":"teamC"}')" = 201 ] || fail "c1"
[ "$(post '{"id":"d1","profile":"1g","duration_s":3600}')" = 201 ] || fail "d1 (the default tenant)"
wait_for is b1 running || fail "b1 (teamB) did not run: $(state b1)"
wait_for is a1 running || fail "a1 did not run"
sleep 0.3
[ "$(state a2)" = queued ] || fail "a2 runs beyond teamA's limit of 3 slices: $(state a2)"
[ "$(curl -sf "$B/v1/jobs/a1" | jq -r .tenant)" = teamA ] || fail "GET a1 has no tenant teamA"
[ "$(curl -sf "$B/v1/jobs/d1" | jq -r .tenant)" = default ] || fail "GET d1 is not the default tenant's"

# /v1/tenants against what the jobs imply (live: starting, running,
# migrating; slices from the placed profile, "2g.10gb" -> 2)
check_tenants() {
    local jobs ten
    jobs=$(curl -sf "$B/v1/jobs?limit=1000") || fail "GET /v1/jobs"
    ten=$(tenants) || fail "GET /v1/tenants"
    echo "$jobs" | jq -e --argjson t "$ten" '
        [.jobs[] | {t: .tenant, s: .state, n: (if .placement then (.placement.profile | capture("^(?<n>[0-9]+)").n | tonumber) * .placement.gpus else 0 end)}] as $j
        | [$t.tenants[] | . as $x
           | ($j | map(select(.t == $x.name and (.s == "running" or .s == "starting" or .s == "migrating")))) as $live
           | ($x.usage_slices == ($live | map(.n) | add // 0))
             and ($x.running == ($live | length))
             and ($x.waiting == ($j | map(select(.t == $x.name and .s == "queued")) | length))]
        | all' >/dev/null || fail "/v1/tenants disagrees with the jobs: $ten / $(echo "$jobs" | jq -c '[.jobs[] | [.id, .tenant, .state, .placement.profile]]')"
}
check_tenants
[ "$(tfield teamA usage_slices)" = 2 ] && [ "$(tfield teamA limit_slices)" = 3 ] &&
    [ "$(tfield teamA guarantee_slices)" = 2 ] && [ "$(tfield teamA waiting)" = 1 ] &&
    [ "$(tfield teamB usage_slices)" = 3 ] && [ "$(tfield teamB weight)" = 2 ] &&
    [ "$(tfield teamC limit_slices)" = 1 ] && [ "$(tfield default usage_slices)" = 1 ] &&
    [ "$(tfield teamB limit_slices)" = null ] || fail "/v1/tenants: $(tenants)"

# /metrics: the per-tenant series, and promtool's check
curl -sf "$B/metrics" > "$SVC_TMP/metrics" || fail "GET /metrics"
for want in 'migsched_tenant_usage_slices{tenant="teamA"} 2' 'migsched_tenant_limit_slices{tenant="teamA"} 3' \
            'migsched_tenant_guarantee_slices{tenant="teamA"} 2' 'migsched_tenant_usage_slices{tenant="teamB"} 3' \
            'migsched_tenant_jobs{tenant="teamA",state="waiting"} 1' 'migsched_tenant_jobs{tenant="teamA",state="running"} 1'; do
    grep -qxF "$want" "$SVC_TMP/metrics" || fail "/metrics lacks '$want'"
done
grep -q '^migsched_tenant_limit_slices{tenant="teamB"}' "$SVC_TMP/metrics" && fail "teamB has no limit but a limit series"
# `migsched status`, human and --json, and the status page
"$M" status --server "$B" > "$SVC_TMP/status" || fail "migsched status"
grep -Eq '^  name +weight +guarantee +limit +mem-limit +mem-guarantee +usage ' "$SVC_TMP/status" || fail "status header: $(cat "$SVC_TMP/status")"
grep -Eq '^  teamA +1 +2 +3 +- +- +2 +0\.[0-9]+ +1 +1$' "$SVC_TMP/status" || fail "status has no teamA row: $(cat "$SVC_TMP/status")"
grep -Eq '^  teamB +2 +0 +- +- +- +3 ' "$SVC_TMP/status" || fail "status has no teamB row: $(cat "$SVC_TMP/status")"
"$M" status --server "$B" --json | jq -e '(.tenants[] | select(.name == "teamA") | .usage_slices == 2 and .waiting == 1)
    and (.nodes | length) == 1' >/dev/null || fail "status --json has no tenants"
"$M" submit --server "$B" --profile 1g --duration 3600 --tenant teamB --id s1 >/dev/null || fail "migsched submit --tenant"
[ "$(curl -sf "$B/v1/jobs/s1" | jq -r .tenant)" = teamB ] || fail "migsched submit --tenant: not teamB's"
"$M" submit --server "$B" --profile 1g --tenant nobody >/dev/null 2>&1; [ $? = 1 ] || fail "migsched submit --tenant nobody: want exit 1"
curl -sf "$B/" | grep -q '/v1/tenants' || fail "the status page does not show the tenants"
bash tests/service/check_metrics.sh "$SVC_TMP/metrics" || fail "metrics format"
skipped=""
if command -v promtool >/dev/null; then promtool check metrics < "$SVC_TMP/metrics" || fail "promtool"
else skipped="promtool missing (scripts/deps/test/service.list): /metrics not checked by it"; fi

# --- SIGHUP: a good file applies (teamA's limit 4 lets a2 start; teamD is
# declared), a bad one keeps the set it has ------------------------------
sed -i 's/limit=3/limit=4/; s/half-life = 600/half-life = 3600/' "$conf"
echo 'tenant = teamD' >> "$conf"
kill -HUP "$SVC_PID"
wait_for grep -q '"SIGHUP: tenants reloaded"' "$SVC_TMP/log" || fail "no reload logged"
[ "$(tenants | jq .half_life_s)" = 3600 ] || fail "SIGHUP did not set the half-life to 3600: $(tenants)"
wait_for is a2 running || fail "a2 did not start after teamA's limit was raised: $(state a2)"
[ "$(tfield teamA limit_slices)" = 4 ] || fail "teamA's limit is not 4: $(tenants)"
[ "$(post '{"id":"e1","profile":"1g","duration_s":3600,"tenant":"teamD"}')" = 201 ] || fail "teamD not declared after the reload"
check_tenants
echo 'tenant = teamE:limit=x' >> "$conf"
kill -HUP "$SVC_PID"
wait_for grep -q 'the previous ones stay' "$SVC_TMP/log" || fail "a bad reload is not logged"
grep 'the previous ones stay' "$SVC_TMP/log" | grep -q 'm.conf:7: tenant' || fail "the bad reload does not name the file and line"
[ "$(tfield teamA limit_slices)" = 4 ] || fail "a bad reload changed teamA"
[ "$(post '{"id":"e2","profile":"1g","tenant":"teamE"}')" = 422 ] || fail "teamE of a bad file was declared"
[ "$(post '{"id":"e3","profile":"1g","tenant":"teamD"}')" = 201 ] || fail "a bad reload dropped teamD"
sed -i '$d' "$conf"
# a job larger than its tenant's limit is refused (422 naming the
# tenant, its limit and the need): teamC may hold 1 slice, a 2g needs 2
[ "$(post '{"id":"c2","profile":"2g","tenant":"teamC"}')" = 422 ] || fail "c2 over teamC's limit: $(cat "$SVC_TMP/out")"
jq -e '.error.field == "tenant" and (.error.message | test("teamC.* 1 compute slices.*needs 2"))' "$SVC_TMP/out" >/dev/null ||
    fail "c2's 422 does not say why: $(cat "$SVC_TMP/out")"
[ "$(curl -s -o /dev/null -w '%{http_code}' "$B/v1/jobs/c2")" = 404 ] || fail "the refused c2 was kept"
# a3 (4 slices) waits within teamA's limit of 4; the reload below lowers
# the limit to 3: a3 stays queued, with an over-limit event and a warning
[ "$(post '{"id":"a3","profile":"4g","duration_s":3600,"tenant":"teamA"}')" = 201 ] || fail "a3: $(cat "$SVC_TMP/out")"
sleep 0.3
[ "$(state a3)" = queued ] || fail "a3 is $(state a3), not queued behind teamA's 4 slices"
sed -i 's/limit=4/limit=3/' "$conf"
# a tenant no longer declared keeps its jobs, takes no new one
sed -i '/teamD/d' "$conf"
kill -HUP "$SVC_PID"
wait_for reloads 2 || fail "second reload not logged"
[ "$(state a3)" = queued ] || fail "a3 was dropped by the lower limit: $(state a3)"
curl -s "$B/v1/events?since=0&timeout=0&limit=10000" |
    jq -e '[.events[] | select(.job == "a3" and .state == "over-limit" and .by == "teamA")] | length == 1' >/dev/null ||
    fail "no over-limit event for a3: $(curl -s "$B/v1/events?since=0&timeout=0&limit=10000" | jq -c '[.events[] | select(.job == "a3")]')"
grep 'larger than its tenant' "$SVC_TMP/log" | grep -q '"job":"a3"' || fail "no warning for a3 in the log"
[ "$(post '{"id":"e4","profile":"1g","tenant":"teamD"}')" = 422 ] || fail "teamD still takes jobs after its removal"
[ "$(tfield teamD declared)" = false ] || fail "teamD is not shown as undeclared: $(tenants)"
check_tenants
before=$(tenants | jq -c '[.tenants[] | {name, usage_slices, running, waiting}] | sort_by(.name)')
svc_stop

# --- a restart keeps every job's tenant (teamD's too, undeclared now) -----
svc_start "$SVC_TMP/log2" --state-dir "$SVC_TMP/s" --config "$conf" --tenant teamC:limit=1
[ "$(curl -sf "$B/v1/jobs/a2" | jq -r .tenant)" = teamA ] || fail "a2's tenant after the restart"
[ "$(curl -sf "$B/v1/jobs/e1" | jq -r .tenant)" = teamD ] || fail "e1's tenant after the restart"
after=$(tenants | jq -c '[.tenants[] | {name, usage_slices, running, waiting}] | sort_by(.name)')
[ "$before" = "$after" ] || fail "tenants before the restart $before, after $after"
[ "$(tenants | jq .half_life_s)" = 3600 ] || fail "half-life after the restart: $(tenants)"
check_tenants
svc_stop
# the command line's --tenant-half-life applies after the file's, and
# SIGHUP keeps it so
svc_start "$SVC_TMP/log2b" --state-dir "$SVC_TMP/s" --config "$conf" --tenant teamC:limit=1 --tenant-half-life=0
[ "$(tenants | jq .half_life_s)" = 0 ] || fail "--tenant-half-life=0 not over the file's: $(tenants)"
kill -HUP "$SVC_PID"
wait_for grep -q '"SIGHUP: tenants reloaded"' "$SVC_TMP/log2b" || fail "no reload logged (2b)"
[ "$(tenants | jq .half_life_s)" = 0 ] || fail "SIGHUP lost the command line's half-life: $(tenants)"
check_tenants
svc_stop

# --- a store of schema 1 (before r_tenant) opens: the column is added ----
sqlite3 "$SVC_TMP/s/migschedd.db" "ALTER TABLE jobs DROP COLUMN r_tenant; PRAGMA user_version=1" || fail "downgrade"
svc_start "$SVC_TMP/log3" --state-dir "$SVC_TMP/s" --config "$conf" --tenant teamC:limit=1
[ "$(state b1)" = running ] || fail "b1 after the migration: $(state b1)"
[ "$(post '{"id":"m1","profile":"1g","tenant":"teamB"}')" = 201 ] || fail "submit after the migration"
svc_stop
[ "$(sqlite3 "$SVC_TMP/s/migschedd.db" 'PRAGMA user_version')" = 2 ] || fail "the store was not migrated"
[ "$(sqlite3 "$SVC_TMP/s/migschedd.db" "SELECT r_tenant FROM jobs WHERE id='m1'")" = teamB ] || fail "m1's tenant not stored"
[ -z "$(sqlite3 "$SVC_TMP/s/migschedd.db" "SELECT r_tenant FROM jobs WHERE id='a1'")" ] || fail "an old row got a tenant"

# --- a memory limit (mem-limit=GB): a 3g.20gb runs, then the tenant's 1g
# waits on a GPU with room while another tenant's runs; shown in
# /v1/tenants and /metrics; a bad value names the option --------------------
bad "--tenant: 't1:mem-limit=-5': mem-limit must be a number of GB" --tenant t1:mem-limit=-5
bad "--tenant: 't1:mem-guarantee=-5': mem-guarantee must be a number of GB" --tenant t1:mem-guarantee=-5
bad "--tenant: 't1:mem-limit=10,mem-guarantee=20': mem-guarantee above the mem-limit" \
    --tenant t1:mem-limit=10,mem-guarantee=20
# memT's guarantee of 10 GB changes nothing here (no preemption; its jobs
# would borrow): it is shown beside the limit
svc_start "$SVC_TMP/log4" --state-dir "$SVC_TMP/s4" --node a=1xA100-40GB \
    --tenant memT:mem-limit=20,mem-guarantee=10 --tenant other
[ "$(post '{"id":"g3","profile":"3g.20gb","tenant":"memT","duration_s":3600}')" = 201 ] || fail "g3"
wait_for is g3 running || fail "g3 is $(state g3)"
[ "$(post '{"id":"g1","profile":"1g.5gb","tenant":"memT","duration_s":3600}')" = 201 ] || fail "g1"
[ "$(post '{"id":"o1","profile":"1g.5gb","tenant":"other","duration_s":3600}')" = 201 ] || fail "o1"
wait_for is o1 running || fail "o1 is $(state o1)"
[ "$(state g1)" = queued ] || fail "g1 is $(state g1) over memT's 20 GB"
[ "$(tfield memT limit_mem_gb)" = 20 ] || fail "limit_mem_gb: $(tenants)"
[ "$(tfield memT usage_mem_gb)" = 20 ] || fail "usage_mem_gb: $(tenants)"
[ "$(tfield other limit_mem_gb)" = null ] || fail "other's limit_mem_gb: $(tenants)"
[ "$(tfield memT guarantee_mem_gb)" = 10 ] || fail "guarantee_mem_gb: $(tenants)"
[ "$(tfield other guarantee_mem_gb)" = null ] || fail "other's guarantee_mem_gb: $(tenants)"
# `migsched status` shows it (GB), and none for the other
"$M" status --server "$B" > "$SVC_TMP/status4" || fail "migsched status (memory limit)"
grep -Eq '^  memT +1 +0 +- +20GB +10GB +3 ' "$SVC_TMP/status4" || fail "status has no memT row with 20GB: $(cat "$SVC_TMP/status4")"
grep -Eq '^  other +1 +0 +- +- +- ' "$SVC_TMP/status4" || fail "status: other has a memory limit: $(cat "$SVC_TMP/status4")"
curl -sf "$B/metrics" | grep -qx 'migsched_tenant_limit_memory_bytes{tenant="memT"} 20000000000' || fail "no memory limit series"
curl -sf "$B/metrics" | grep -qx 'migsched_tenant_guarantee_memory_bytes{tenant="memT"} 10000000000' || fail "no memory guarantee series"
curl -sf "$B/metrics" | grep -q 'migsched_tenant_guarantee_memory_bytes{tenant="other"}' && fail "other has a memory guarantee series"
curl -sf "$B/metrics" | promtool check metrics || fail "promtool check metrics (memory limit)"
curl -sf -X DELETE "$B/v1/jobs/g3" >/dev/null || fail "cancel g3"
wait_for is g1 running || fail "g1 did not run once g3 left: $(state g1)"
svc_stop

# --- a per model limit (limit@MODEL=S), from the config file: a 3g runs,
# the tenant's next 1g waits on a GPU with room while another tenant's
# runs; /v1/tenants (limits_by_model) and /metrics show it; a SIGHUP that
# raises it lets the 1g start; bad values name the option -----------------
bad "--tenant: 't1:limit@Z100=3': limit@Z100: no such GPU model" --tenant t1:limit@Z100=3
bad "--tenant: 't1:limit@A100=3,limit@A100-40GB=4': limit@A100-40GB: model A100-40GB is limited twice" \
    --tenant t1:limit@A100=3,limit@A100-40GB=4
bad "--tenant: 't1:limit@A30=-1': limit@A30 must be a whole number" --tenant t1:limit@A30=-1
conf5=$SVC_TMP/model.conf
printf 'tenant = modT:limit@A100-40GB=3,limit@H100-80GB=7\ntenant = other\n' > "$conf5"
svc_start "$SVC_TMP/log5" --state-dir "$SVC_TMP/s5" --node a=1xA100-40GB --config "$conf5"
[ "$(post '{"id":"p3","profile":"3g","tenant":"modT","duration_s":3600}')" = 201 ] || fail "p3"
wait_for is p3 running || fail "p3 is $(state p3)"
[ "$(post '{"id":"p1","profile":"1g","tenant":"modT","duration_s":3600}')" = 201 ] || fail "p1"
[ "$(post '{"id":"q1","profile":"1g","tenant":"other","duration_s":3600}')" = 201 ] || fail "q1"
wait_for is q1 running || fail "q1 is $(state q1)"
[ "$(state p1)" = queued ] || fail "p1 is $(state p1) over modT's 3 slices on A100-40GB"
tenants | jq -e '(.tenants[] | select(.name == "modT") | .limits_by_model ==
        {"A100-40GB": {"limit_slices": 3, "guarantee_slices": 0, "usage_slices": 3},
         "H100-80GB": {"limit_slices": 7, "guarantee_slices": 0, "usage_slices": 0}})
    and (.tenants[] | select(.name == "other") | .limits_by_model == {})' >/dev/null ||
    fail "limits_by_model: $(tenants)"
curl -sf "$B/metrics" > "$SVC_TMP/metrics5"
grep -qx 'migsched_tenant_limit_model_slices{tenant="modT",model="A100-40GB"} 3' "$SVC_TMP/metrics5" || fail "no per model limit series"
grep -qx 'migsched_tenant_usage_model_slices{tenant="modT",model="A100-40GB"} 3' "$SVC_TMP/metrics5" || fail "no per model usage series"
grep -qx 'migsched_tenant_usage_model_slices{tenant="modT",model="H100-80GB"} 0' "$SVC_TMP/metrics5" || fail "no H100 usage series"
grep -q 'model_slices{tenant="other"' "$SVC_TMP/metrics5" && fail "other has a per model series"
if command -v promtool >/dev/null; then
    promtool check metrics < "$SVC_TMP/metrics5" || fail "promtool check metrics (per model limit)"
fi
sed -i 's/limit@A100-40GB=3/limit@A100-40GB=4/' "$conf5"
kill -HUP "$SVC_PID"
wait_for grep -q '"SIGHUP: tenants reloaded"' "$SVC_TMP/log5" || fail "no reload logged (per model limit)"
wait_for is p1 running || fail "p1 did not run once the limit was 4: $(state p1)"
[ "$(tenants | jq '.tenants[] | select(.name == "modT") | .limits_by_model["A100-40GB"].usage_slices')" = 4 ] ||
    fail "usage after the reload: $(tenants)"
svc_stop

# --- a per model guarantee (guarantee@MODEL=S), from the config file:
# /v1/tenants shows it in limits_by_model (limit null where only a
# guarantee is declared), /metrics has its series; bad values exit 2
# naming the field ---------------------------------------------------------
bad "--tenant: 't1:guarantee@A100=4,limit@A100-40GB=2': guarantee@A100-40GB (4) above limit@A100-40GB (2)" \
    --tenant t1:guarantee@A100=4,limit@A100-40GB=2
printf 'tenant = t1:guarantee@A100-40GB=0\n' > "$SVC_TMP/bad6.conf"
bad "bad6.conf:1: tenant: 't1:guarantee@A100-40GB=0': guarantee@A100-40GB must be a whole number of compute slices in 1..1e9" \
    --config "$SVC_TMP/bad6.conf"
bad "--tenant: 't1:guarantee@Z100=3': guarantee@Z100: no such GPU model" --tenant t1:guarantee@Z100=3
bad "--tenant: 't1:guarantee@A30=1,guarantee@A30=2': guarantee@A30: model A30 is guaranteed twice" \
    --tenant t1:guarantee@A30=1,guarantee@A30=2
conf6=$SVC_TMP/mguar.conf
printf 'tenant = gT:guarantee@A100-40GB=3,limit@A100-40GB=5\ntenant = gU:guarantee@H100-80GB=7\n' > "$conf6"
svc_start "$SVC_TMP/log6" --state-dir "$SVC_TMP/s6" --node a=1xA100-40GB --config "$conf6"
[ "$(post '{"id":"m3","profile":"3g","tenant":"gT","duration_s":3600}')" = 201 ] || fail "m3"
wait_for is m3 running || fail "m3 is $(state m3)"
tenants | jq -e '(.tenants[] | select(.name == "gT") | .limits_by_model ==
        {"A100-40GB": {"limit_slices": 5, "guarantee_slices": 3, "usage_slices": 3}})
    and (.tenants[] | select(.name == "gU") | .limits_by_model ==
        {"H100-80GB": {"limit_slices": null, "guarantee_slices": 7, "usage_slices": 0}})' >/dev/null ||
    fail "limits_by_model with guarantees: $(tenants)"
curl -sf "$B/metrics" > "$SVC_TMP/metrics6"
grep -qx 'migsched_tenant_guarantee_model_slices{tenant="gT",model="A100-40GB"} 3' "$SVC_TMP/metrics6" ||
    fail "no per model guarantee series"
grep -qx 'migsched_tenant_guarantee_model_slices{tenant="gU",model="H100-80GB"} 7' "$SVC_TMP/metrics6" ||
    fail "no gU guarantee series"
grep -q 'migsched_tenant_limit_model_slices{tenant="gU"' "$SVC_TMP/metrics6" && fail "gU has a limit series"
grep -qx 'migsched_tenant_usage_model_slices{tenant="gU",model="H100-80GB"} 0' "$SVC_TMP/metrics6" ||
    fail "no gU usage series"
if command -v promtool >/dev/null; then
    promtool check metrics < "$SVC_TMP/metrics6" || fail "promtool check metrics (per model guarantee)"
fi
svc_stop

[ -z "$skipped" ] || { echo "skip: $skipped"; exit 77; }
echo "test_service_tenants: ok"
