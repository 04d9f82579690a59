#!/usr/bin/env bash
# The queue-discipline table of docs/zoo.md from a zoo.csv: for every
# policy and discipline (a variant POLICY/OPTS; POLICY alone is the zoo's
# default queue), the change against the policy under BASE (default
# "backfill": FCFS + backfill bounded at 3600 s, the default before issue
# 11's queue work) on each workload in mean JCT, mean wait and p99 wait:
# the mean of the per-workload changes and the worst (largest) one, and on
# how many workloads mean JCT is not higher (within 0.05%) and p99 wait at most 25% higher.
#
#   bash scripts/zoo-queue.sh report/zoo/queue/zoo.csv [BASE]
set -eu
csv=${1:?usage: zoo-queue.sh zoo.csv [BASE]}
base=${2:-backfill}
awk -F, -v base="$base" '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
    w = $col["workload"]; v = $col["variant"]
    p = v; d = "(zoo default)"
    if ((k = index(v, "/")) > 0) { p = substr(v, 1, k - 1); d = substr(v, k + 1) }
    jct[w, p, d] = $col["mean_jct_s"]; wait[w, p, d] = $col["mean_wait_s"]
    p99[w, p, d] = $col["p99_wait_s"]
    if (!((w) in ws)) { ws[w] = 1; wl[++nw] = w }
    if (!((p) in ps)) { ps[p] = 1; pl[++np] = p }
    if (!((d) in ds)) { ds[d] = 1; dl[++nd] = d }
}
function pct(a, b) { return b > 0 ? 100 * (a / b - 1) : 0 }
END {
    print "| policy | discipline | mean JCT: mean change | worst | mean wait: mean | p99 wait: mean change | worst | JCT not higher, p99 <= +25% |"
    print "|---|---|---:|---:|---:|---:|---:|---:|"
    for (i = 1; i <= np; i++) for (k = 1; k <= nd; k++) {
        p = pl[i]; d = dl[k]; n = 0; sj = sw = sp = 0; wj = wp = -1e9; ok = 0
        for (x = 1; x <= nw; x++) {
            w = wl[x]
            if (!((w, p, d) in jct) || !((w, p, base) in jct)) continue
            n++
            cj = pct(jct[w, p, d], jct[w, p, base]); cw = pct(wait[w, p, d], wait[w, p, base])
            cp = pct(p99[w, p, d], p99[w, p, base])
            sj += cj; sw += cw; sp += cp
            if (cj > wj) wj = cj
            if (cp > wp) wp = cp
            if (cj <= 0.05 && cp <= 25) ok++
        }
        if (n == 0) continue
        printf "| %s | %s | %+.1f%% | %+.1f%% | %+.1f%% | %+.1f%% | %+.1f%% | %d/%d |\n", \
            p, d, sj / n, wj, sw / n, sp / n, wp, ok, n
    }
}' "$csv"
