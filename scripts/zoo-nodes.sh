#!/usr/bin/env bash
# The node-size table of docs/policies.md (node-profile) from a zoo.csv
# whose variants are POLICY/node=N and BASE/node=N (scripts/zoo.sh's
# nodes*/ runs): for each workload and node size, POLICY against BASE as a
# ratio of the means over the seeds (both ran on the same traces), makespan
# / mean JCT, then the worst cell per node size.
#
#   bash scripts/zoo-nodes.sh report/zoo/nodes/zoo.csv [POLICY [BASE]]
set -eu
csv=${1:?usage: zoo-nodes.sh zoo.csv [POLICY [BASE]]}
pol=${2:-node-profile}
base=${3:-static}
awk -F, -v pol="$pol" -v base="$base" '
NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
    w = $col["workload"]; v = $col["variant"]
    if ((k = index(v, "/node=")) == 0) next
    p = substr(v, 1, k - 1); n = substr(v, k + 6) + 0
    if (p != pol && p != base) next
    mk[w, p, n] = $col["makespan_s"]; jct[w, p, n] = $col["mean_jct_s"]
    if (!((w) in ws)) { ws[w] = 1; wl[++nw] = w }
    if (!((n) in ns)) { ns[n] = 1; nl[++nn] = n }
}
function pct(a, b) { return b > 0 ? 100 * (a / b - 1) : 0 }
END {
    # node sizes ascending (a handful: insertion sort)
    for (i = 2; i <= nn; i++)
        for (j = i; j > 1 && nl[j - 1] > nl[j]; j--) { t = nl[j]; nl[j] = nl[j - 1]; nl[j - 1] = t }
    printf "| workload |"
    for (i = 1; i <= nn; i++) printf " %d GPU%s a node |", nl[i], nl[i] == 1 ? "" : "s"
    printf "\n|---|"
    for (i = 1; i <= nn; i++) printf "---:|"
    printf "\n"
    for (x = 1; x <= nw; x++) {
        w = wl[x]; printf "| %s |", w
        for (i = 1; i <= nn; i++) {
            n = nl[i]
            if (!((w, pol, n) in mk) || !((w, base, n) in mk)) { printf " |"; continue }
            a = pct(mk[w, pol, n], mk[w, base, n]); b = pct(jct[w, pol, n], jct[w, base, n])
            printf " %+.1f%% / %+.1f%% |", a, b
            if (!((n) in worst) || a > worst[n]) worst[n] = a
            if (b > worst[n]) worst[n] = b
        }
        printf "\n"
    }
    printf "| **worst** |"
    for (i = 1; i <= nn; i++) printf " **%+.1f%%** |", worst[nl[i]]
    printf "\n"
}' "$csv"
