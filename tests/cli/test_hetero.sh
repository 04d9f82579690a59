#!/usr/bin/env bash
# A heterogeneous cluster end to end: simulate --node / --cluster writes a
# schedule with node and model columns; every row's GPU belongs to its node
# and model; time-sliced GPUs never hold more than R jobs at once and whole
# GPUs never two; bad node specs are usage errors naming the problem.
set -eu
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$M" gen-trace --jobs 400 --load 1.0 --gpus 12 --mix 1g=4,2g=3,3g=2,4g=1,7g=1 \
    --dist lognormal --mean 300 --seed 8 -o "$tmp/t.csv"
cat > "$tmp/cluster.txt" <<'C'
# a mixed platform
a=4xA100-40GB
b=2xH100-80GB        # MIG
c=4xA100-40GB:timeslice=3
d=2xA30-24GB:whole
C
for p in fa first-fit best-fit mfi fgd static node-profile timeslice; do
    "$M" simulate --trace "$tmp/t.csv" --policy "$p" --cluster "$tmp/cluster.txt" \
        --schedule-out "$tmp/s-$p.csv" --metrics-out "$tmp/m-$p.json" --quiet \
        || fail "simulate --policy $p on the mixed cluster"
    head -n1 "$tmp/s-$p.csv" | grep -qx 'job_id,gpu,start,profile,begin_s,end_s,node,model' \
        || fail "$p: schedule header $(head -n1 "$tmp/s-$p.csv")"
    grep -q '"jobs_completed": 400' "$tmp/m-$p.json" || fail "$p: not every job completed"
    # gpu -> node/model as configured: a 0-3, b 4-5, c 6-9, d 10-11
    awk -F, -v p="$p" 'NR > 1 {
        g = $2; want = g < 4 ? "a,A100-40GB" : g < 6 ? "b,H100-80GB" : g < 10 ? "c,A100-40GB" : "d,A30"
        if ($7 "," $8 != want) { print p ": row " NR " gpu " g " on " $7 "," $8 ", want " want; exit 1 }
        if (g >= 6 && $3 != -1) { print p ": row " NR " has a MIG start on a shared GPU"; exit 1 }
    }' "$tmp/s-$p.csv" || fail "node/model columns"
    # at any instant: <= 3 jobs on a time-sliced GPU, <= 1 on a whole GPU
    awk -F, 'NR > 1 && $2 >= 6 { print $2, $5, 1; print $2, $6, -1 }' "$tmp/s-$p.csv" |
        sort -k1,1n -k2,2g -k3,3n | awk '{ n[$1] += $3; lim = $1 >= 10 ? 1 : 3
            if (n[$1] > lim) { print "gpu " $1 " holds " n[$1] " jobs at " $2; exit 1 } }' \
        || fail "$p: a shared GPU holds too many jobs"
done

# check validates each policy's heterogeneous schedule in each GPU's model and mode
for p in fa first-fit best-fit mfi fgd static node-profile timeslice; do
    ts=; [ "$p" = timeslice ] && ts=--timeslice
    "$M" check --trace "$tmp/t.csv" --schedule "$tmp/s-$p.csv" --cluster "$tmp/cluster.txt" $ts \
        > "$tmp/c-$p.txt" || fail "check rejects $p's schedule: $(tail -n 3 "$tmp/c-$p.txt")"
done
# ... and rejects broken ones: a row on the wrong node, an illegal start on
# the H100s, four jobs at once on a GPU time-sliced 3 ways, two on a whole GPU
broken() { # NAME AWK-PROGRAM
    awk -F, -v OFS=, "$2" "$tmp/s-fa.csv" > "$tmp/b-$1.csv"
    if "$M" check --trace "$tmp/t.csv" --schedule "$tmp/b-$1.csv" --cluster "$tmp/cluster.txt" \
        > "$tmp/cb-$1.txt"; then fail "check accepts $1"; fi
    grep -q "violation" "$tmp/cb-$1.txt" || fail "$1: $(cat "$tmp/cb-$1.txt")"
}
broken node 'NR == 2 { $7 = "zz" } { print }'
broken start '!d && NR > 1 && $8 == "H100-80GB" && $3 >= 0 { $3 = 7; $4 = "3g.40gb"; d = 1 } { print }'
broken slots 'NR == 1 { print; next } { print } END { for (i = 0; i < 4; i++) print i ",6,-1,1g.5gb,1000,2000,c,A100-40GB" }'
broken whole 'NR == 1 { print; next } { print } END { for (i = 0; i < 2; i++) print i ",10,-1,4g.24gb,1000,2000,d,A30" }'

# the same cluster with --node, same schedule
"$M" simulate --trace "$tmp/t.csv" --policy fa --node a=4xA100-40GB --node b=2xH100-80GB \
    --node c=4xA100-40GB:timeslice=3 --node d=2xA30-24GB:whole --schedule-out "$tmp/s2.csv" --quiet
cmp -s "$tmp/s-fa.csv" "$tmp/s2.csv" || fail "--node and --cluster differ"

# requests by memory and constraints from the trace: model=H100-80GB rows run
# on b only; isolation=mig rows never on the time-sliced node c; a 10 GB
# request is a 1g.10gb on an H100 and a 2g.10gb on an A100
{
    echo "job_id,arrival_s,mem_gb,profile,duration_s,model,isolation,priority"
    i=0
    while [ $i -lt 120 ]; do
        case $((i % 4)) in
            0) echo "r$i,$((i * 5)),10,,200,,mig,0" ;;
            1) echo "r$i,$((i * 5)),,3g,300,H100-80GB,,1" ;;
            2) echo "r$i,$((i * 5)),5,,100,,,0" ;;
            *) echo "r$i,$((i * 5)),,2g.10gb,150,,,0" ;;
        esac
        i=$((i + 1))
    done
} > "$tmp/req.csv"
"$M" simulate --trace "$tmp/req.csv" --policy fa+ --cluster "$tmp/cluster.txt" \
    --schedule-out "$tmp/req-s.csv" --metrics-out "$tmp/req-m.json" --quiet || fail "simulate requests"
grep -q '"jobs_completed": 120' "$tmp/req-m.json" || fail "not every request completed"
awk -F, 'NR > 1 { n = substr($1, 2) + 0; k = n % 4
    if (k == 1 && $8 != "H100-80GB") { print "model constraint broken: " $0; bad = 1 }
    if (k == 0 && $7 == "c") { print "isolated job time-sliced: " $0; bad = 1 }
    if (k == 0 && $8 == "H100-80GB" && $4 != "1g.10gb") { print "10 GB on an H100: " $0; bad = 1 }
    if (k == 0 && $8 == "A100-40GB" && $2 < 4 && $4 != "2g.10gb") { print "10 GB on an A100: " $0; bad = 1 } }
    END { exit bad }' "$tmp/req-s.csv" || fail "requests"

# usage errors name the problem
for bad in "a=0xA100-40GB" "a=4xNOPE" "a=4xA100-40GB:timeslice=0" "=4xA100-40GB" "a=4xA100-40GB:zz"; do
    set +e
    "$M" simulate --trace "$tmp/t.csv" --policy fa --node "$bad" > /dev/null 2> "$tmp/err.txt"
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "--node $bad: exit $rc, wanted 2"
    grep -q -- "--node" "$tmp/err.txt" || fail "--node $bad: $(cat "$tmp/err.txt")"
done
set +e
"$M" simulate --trace "$tmp/t.csv" --policy fa --node a=1xA100-40GB --node a=1xA100-40GB \
    > /dev/null 2> "$tmp/err.txt"; rc=$?
set -e
[ "$rc" -eq 2 ] && grep -q "used twice" "$tmp/err.txt" || fail "duplicate node name: $rc $(cat "$tmp/err.txt")"
echo ok
