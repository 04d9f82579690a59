#!/usr/bin/env bash
# Issue 8's reproducers, each a clear error (or a correct result) within
# a few seconds, with the exit-code convention of docs/cli.md: 1 bad input
# data, 2 bad usage (incl. an option value outside its documented range).
set -u
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nfail=0
fail() { echo "FAIL: $*"; nfail=$((nfail + 1)); }

# expect CODE PATTERN -- command...: exit CODE (within 10 s even sanitized)
# and stderr+stdout matching the extended regex PATTERN
expect() {
    local want=$1 pat=$2 rc
    shift 3
    timeout 10 "$@" >"$tmp/out" 2>&1
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        fail "exit $rc (wanted $want): $*"; sed 's/^/    /' "$tmp/out" | head -5
    elif [ -n "$pat" ] && ! grep -Eq -- "$pat" "$tmp/out"; then
        fail "no /$pat/ in the output of: $*"; sed 's/^/    /' "$tmp/out" | head -5
    fi
}
hdr='job_id,arrival_s,profile,duration_s'
printf '%s\na,0,1g,5\nb,1,3g,7\n' "$hdr" >"$tmp/t.csv"

# 1. no GPU demand: an error, not an endless loop
printf 'name,cpu_milli,memory_mib,num_gpu,gpu_milli\na,1000,1000,0,0\n' >"$tmp/cpu.csv"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\n' >"$tmp/nodes.csv"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,0,\n' >"$tmp/cpunodes.csv"
expect 1 'no GPU demand' -- "$M" fgd-experiment --nodes "$tmp/nodes.csv" --pods "$tmp/cpu.csv" \
    --policy fgd --seeds 42 --json "$tmp/o.json"
expect 1 'no GPU demand' -- "$M" import-alibaba --pods "$tmp/cpu.csv" --fill --gpus 8 --seeds 1
expect 1 'no node of the list has a GPU' -- "$M" fgd-experiment --nodes "$tmp/cpunodes.csv" \
    --pods "$tmp/cpu.csv" --policy fgd --seeds 42 --json "$tmp/o.json"

# 3. nothing sized by a job id or a GPU number
mkdir -p "$tmp/run"
printf '{"policy":"fa","makespan_s":10,"jobs_total":2}\n' >"$tmp/run/metrics.json"
printf 'job_id,arrival_s,profile,duration_s\n300000000,0,1g,5\n1,0,1g,5\n' >"$tmp/run/trace.csv"
printf 'job_id,gpu,start,profile,begin_s,end_s\n300000000,0,0,1g.5gb,0,5\n1,2000000000,0,1g.5gb,0,5\n' \
    >"$tmp/run/schedule.csv"
expect 0 '' -- "$M" report --runs "$tmp/run" --out "$tmp/rep"
sz=$(stat -c %s "$tmp/rep/gantt_1-run.svg" 2>/dev/null || echo 0)
[ "$sz" -gt 0 ] && [ "$sz" -lt 200000 ] || fail "gantt of GPU 2e9 is $sz bytes"
grep -q 'GPUs 0-63 of 2000000001 shown' "$tmp/rep/gantt_1-run.svg" || fail "gantt does not say what it left out"

# 4. header-only schedule: no UB, and a trace that never ran is invalid
printf 'job_id,gpu,start,profile,begin_s,end_s\n' >"$tmp/empty.csv"
expect 1 'job a is not in the schedule' -- "$M" check --trace "$tmp/t.csv" --schedule "$tmp/empty.csv" --gpus 1
expect 0 'valid: 0 segments, 0 jobs ran, 2 not in the schedule' -- "$M" check --trace "$tmp/t.csv" \
    --schedule "$tmp/empty.csv" --gpus 1 --allow-missing
printf '%s,gpus\ng,0,7g,5,2\n' "$hdr" >"$tmp/gang.csv"
expect 0 '' -- "$M" simulate --trace "$tmp/gang.csv" --gpus 1 --policy fa --schedule-out "$tmp/gs.csv" --quiet
expect 0 '1 jobs can never run here' -- "$M" check --trace "$tmp/gang.csv" --schedule "$tmp/gs.csv" --gpus 1
for bad in '4e118' '9223372036854775808' '-1' '1.5' '1e999'; do
    printf '{"policy":"fa","jobs_total":%s}\n' "$bad" >"$tmp/run/metrics.json"
    expect 1 'jobs_total' -- "$M" report --runs "$tmp/run" --out "$tmp/rep2"
done
printf '{"policy":"fa","jobs_total":0x10}\n' >"$tmp/run/metrics.json"
expect 1 'malformed JSON|JSON number' -- "$M" report --runs "$tmp/run" --out "$tmp/rep2"

# 5. a checker that passes only schedules that do the work
printf 'job_id,gpu,start,profile,begin_s,end_s\na,0,0,1g.5gb,0,0\nb,0,4,3g.20gb,1,8\n' >"$tmp/zero.csv"
expect 1 'job a ran 0.000 s' -- "$M" check --trace "$tmp/t.csv" --schedule "$tmp/zero.csv" --gpus 1
"$M" gen-trace --jobs 2000 --rate 1 -o "$tmp/big.csv" >/dev/null 2>&1
expect 1 '2000 not in the schedule' -- "$M" check --trace "$tmp/big.csv" --schedule "$tmp/empty.csv" --gpus 8
printf '%s\na,0,1g,5\na,1,1g,5\n' "$hdr" >"$tmp/dup.csv"
expect 1 "duplicate job_id 'a'" -- "$M" check --trace "$tmp/dup.csv" --schedule "$tmp/empty.csv" --gpus 1
printf '%s\na,1e17,1g,5\n' "$hdr" >"$tmp/far.csv"
expect 1 "arrival_s.*out of range \[0, 1e9\]" -- "$M" simulate --trace "$tmp/far.csv" --gpus 1 --policy fa

# 6. silent nonsense
printf '%s\n0,1e308,1g,1e308\n' "$hdr" >"$tmp/huge.csv"
expect 1 "t?arrival_s.*out of range" -- "$M" simulate --trace "$tmp/huge.csv" --gpus 1 --policy fa
expect 2 "weights.*\[0, 1e6\]" -- "$M" frag --used '' --weights 2g=inf --json
expect 2 "weights.*\[0, 1e6\]" -- "$M" frag --used 1g@1,1g@5 --weights 2g=1e308,1g=1e308
a=$("$M" frag --json --used 1g@1,1g@5 --weights 2g=1,1g=1 | sed 's/.*"fragcost":\([0-9.]*\).*/\1/')
b=$("$M" frag --json --used 1g@1,1g@5 --weights 2g=1e6,1g=1e6 | sed 's/.*"fragcost":\([0-9.]*\).*/\1/')
[ "$a" = "$b" ] && [ "$a" != "" ] || fail "scaled weights give $a and $b"
expect 2 "create-s.*\[0, 1e\+09\]" -- "$M" simulate --trace "$tmp/t.csv" --gpus 1 --policy fa --create-s 1e308
expect 2 "max \(4\) must be greater than --min \(5\)" -- "$M" gen-trace --jobs 5 --rate 1 --dist uniform \
    --min 5 --max 4 -o "$tmp/x.csv"
expect 2 "mix.*\[0, 1e6\]" -- "$M" gen-trace --jobs 5 --rate 1 --mix 1g=1e308,2g=1e308 -o "$tmp/x.csv"
expect 2 "jobs.*\[0, 100000000\]" -- "$M" gen-trace --jobs 9223372036854775807 --rate 1 -o "$tmp/x.csv"
expect 2 "load.*not a decimal number" -- "$M" gen-trace --jobs 5 --load inf --gpus 1 -o "$tmp/x.csv"
expect 2 "mean.*\[0.001, 1e\+08\]" -- "$M" gen-trace --jobs 5 --rate 1 --mean 1e308 -o "$tmp/x.csv"
expect 2 "arrivals would pass 1e9 s" -- "$M" gen-trace --jobs 100000 --rate 0.00001 -o "$tmp/x.csv"
expect 2 "checkpoint.*\[0.001, 1e\+08\]" -- "$M" gen-trace --jobs 5 --rate 1 --checkpoint 0 -o "$tmp/x.csv"
expect 2 "priority.*\[-1000000, 1000000\]" -- "$M" gen-trace --jobs 5 --rate 1 --priority 1e7 -o "$tmp/x.csv"
# what they write reads back: every job with the column, simulated with it
"$M" gen-trace --jobs 50 --rate 0.1 --priority 2 --checkpoint 60 -o "$tmp/ck.csv" >/dev/null || fail "gen-trace --checkpoint"
head -n1 "$tmp/ck.csv" | grep -qx "job_id,arrival_s,profile,duration_s,priority,checkpoint_s" ||
    fail "gen-trace --priority --checkpoint header: $(head -n1 "$tmp/ck.csv")"
[ "$(awk -F, 'NR > 1 && $5 == 2 && $6 == 60' "$tmp/ck.csv" | wc -l)" = 50 ] || fail "gen-trace: not every job has the columns"
"$M" simulate --trace "$tmp/ck.csv" --gpus 2 --preempt --quiet >/dev/null || fail "the gen-trace --checkpoint trace does not simulate"

# 7. a strict trace reader
printf '%s\n0,0,7g,100,2\n' "$hdr" >"$tmp/wide.csv"
expect 1 'row has 5 fields, the header only 4' -- "$M" simulate --trace "$tmp/wide.csv" --gpus 1 --policy fa
printf '%s\na,0,1g,5\0 junk\n' "$hdr" >"$tmp/nul.csv"
expect 1 'NUL byte' -- "$M" simulate --trace "$tmp/nul.csv" --gpus 1 --policy fa
printf '\xef\xbb\xbf%s\na,1e-320,1g,5\n' "$hdr" >"$tmp/bom.csv"
expect 0 '1 jobs, 1 completed' -- "$M" simulate --trace "$tmp/bom.csv" --gpus 1 --policy fa
printf '%s\na,0,1g,0x10\n' "$hdr" >"$tmp/hex.csv"
expect 1 "duration_s.*'0x10' is not a number" -- "$M" simulate --trace "$tmp/hex.csv" --gpus 1 --policy fa

# 8. one syntax, one exit-code convention
expect 2 'empty item' -- "$M" frag --used '1g@1,'
expect 2 'empty item' -- "$M" frag --used ',1g@1'
expect 0 'FragCost' -- "$M" frag --used '1g@ 1'
expect 0 'FragCost' -- "$M" frag --used '1g@1 '
expect 2 'static_layout' -- "$M" simulate --trace "$tmp/t.csv" --gpus 1 --policy static --static-layout '7g+'
expect 2 'static_layout' -- "$M" simulate --trace "$tmp/t.csv" --gpus 1 --policy static --static-layout '+7g'
expect 2 'beta.*\[0, 10\]' -- "$M" simulate --trace "$tmp/t.csv" --gpus 1 --policy fa --beta inf
expect 2 'beta.*\[0, 10\]' -- "$M" simulate --trace "$tmp/t.csv" --gpus 1 --policy fa --beta -1
expect 2 'profiles' -- "$M" simulate --trace "$tmp/t.csv" --gpus 1 --policy fa --profiles 9g
cp "$tmp/t.csv" "$tmp/keep.csv"
expect 2 'would overwrite' -- "$M" simulate --trace "$tmp/keep.csv" --gpus 1 --policy fa \
    --schedule-out "$tmp/keep.csv"
cmp -s "$tmp/t.csv" "$tmp/keep.csv" || fail "the trace was overwritten"
expect 0 '2 jobs, 2 completed' -- sh -c "\"$M\" simulate --trace - --gpus 1 --policy fa < \"$tmp/t.csv\""
"$M" simulate --trace "$tmp/t.csv" --gpus 1 --policy fa --schedule-out - --quiet >"$tmp/s_out.csv"
expect 0 '^valid' -- sh -c "\"$M\" check --trace \"$tmp/t.csv\" --schedule - --gpus 1 < \"$tmp/s_out.csv\""

# the other readers keep the same rules
ph='name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time'
printf '%s\np0,1000,1000,0x1,1000,,LS,Running,0,10,0\n' "$ph" >"$tmp/hexpods.csv"
expect 1 "num_gpu.*not an integer" -- "$M" import-alibaba --pods "$tmp/hexpods.csv" --out "$tmp/x.csv"
printf '%s\np0,1000,1000,1,1000,,LS,Running,0,10,0\np0,1000,1000,1,500,,LS,Running,1,10,1\n' "$ph" \
    >"$tmp/duppods.csv"
expect 1 "two pods share a name" -- "$M" import-alibaba --pods "$tmp/duppods.csv" --out "$tmp/x.csv"
printf '%s\np0,1000,1000,1,1000,,LS,Running,1e11,2e11,1e11\n' "$ph" >"$tmp/latepods.csv"
expect 1 "up to 1e9 s" -- "$M" import-alibaba --pods "$tmp/latepods.csv" --out "$tmp/x.csv"
printf '{"policy":"fa","jobs_total":2}\n' >"$tmp/run/metrics.json"
printf 'job_id,gpu,start,profile,begin_s,end_s\n1,0,0,1g.5gb,0,5\0x\n' >"$tmp/run/schedule.csv"
expect 1 'NUL byte' -- "$M" report --runs "$tmp/run" --out "$tmp/rep3"

[ "$nfail" -eq 0 ] && echo ok
[ "$nfail" -eq 0 ]
