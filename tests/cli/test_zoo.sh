#!/usr/bin/env bash
# End to end: `migsched zoo --quick` writes its report (Markdown, CSV, SVG),
# one CSV row per workload and variant with finite numbers, the same run
# twice gives the same numbers, and bad options fail with a clear message.
set -eu
M=${MIGSCHED:-build/migsched}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

"$M" zoo --quick --out "$tmp/z" > "$tmp/out.txt" 2> "$tmp/err.txt" \
    || { cat "$tmp/err.txt" >&2; fail "zoo --quick"; }
grep -q '^| workload | fa+ mean JCT' "$tmp/out.txt" || fail "no summary on stdout"
[ -s "$tmp/err.txt" ] && fail "stderr is not a terminal but got output"
for f in zoo.md zoo.csv zoo_runs.csv zoo_jct.svg zoo_makespan.svg; do
    [ -s "$tmp/z/$f" ] || fail "missing $f"
done
for f in zoo_jct zoo_makespan; do
    [ "$(tail -n1 "$tmp/z/$f.svg")" = "</svg>" ] || fail "$f.svg does not end with </svg>"
done
# 3 workloads x 3 variants, 2 seeds each
[ "$(tail -n +2 "$tmp/z/zoo.csv" | wc -l)" -eq 9 ] || fail "zoo.csv rows"
[ "$(tail -n +2 "$tmp/z/zoo_runs.csv" | wc -l)" -eq 18 ] || fail "zoo_runs.csv rows"
for w in seed-4xA100 inference-4xA100 a30-8; do
    for v in fa+ fa first-fit; do
        [ "$(grep -c "^$w,$v," "$tmp/z/zoo.csv")" -eq 1 ] || fail "zoo.csv: $w/$v"
    done
done
# every makespan is at least its lower bound, every number finite
awk -F, 'NR > 1 { if ($4 + 1e-6 < $18) bad = 1; for (i = 4; i <= NF; i++) if ($i !~ /^-?[0-9.]+$/) bad = 1 }
         END { exit bad }' "$tmp/z/zoo.csv" || fail "makespan below bound or non-finite value"
grep -q '^## What migration buys' "$tmp/z/zoo.md" && fail "quick run has no /nomig variants"
grep -q '^### a30-8' "$tmp/z/zoo.md" || fail "no per-workload table"

# deterministic
"$M" zoo --quick --out "$tmp/z2" > /dev/null 2>&1 || fail "second run"
cmp -s "$tmp/z/zoo_runs.csv" "$tmp/z2/zoo_runs.csv" || fail "two runs differ"

# variants with options, and the migration table
"$M" zoo --quick --only a30-8 --variants fa+,fa+/nomig,fa+/t=0.2/fifo,fa/mig=60,fa+/roomq=0 \
    --out "$tmp/z3" > /dev/null 2>&1 || fail "variants with options"
grep -q '^## What migration buys' "$tmp/z3/zoo.md" || fail "no migration table"
[ "$(tail -n +2 "$tmp/z3/zoo.csv" | wc -l)" -eq 5 ] || fail "option variants rows"

# node=N cuts the cluster into nodes of N GPUs: static's layouts are per
# GPU, so its runs do not change; node-profile's whole-node layouts do
"$M" zoo --quick --only a30-8 --variants static,static/node=1,node-profile,node-profile/node=1 \
    --out "$tmp/z4" > /dev/null 2>&1 || fail "node=N variants"
[ "$(grep -c '^a30-8,static,' "$tmp/z4/zoo_runs.csv")" -eq 2 ] || fail "node=N: static rows"
[ "$(grep '^a30-8,static,' "$tmp/z4/zoo_runs.csv" | cut -d, -f3-)" = \
  "$(grep '^a30-8,static/node=1,' "$tmp/z4/zoo_runs.csv" | cut -d, -f3-)" ] || fail "node=N changed static"
[ "$(grep '^a30-8,node-profile,' "$tmp/z4/zoo_runs.csv" | cut -d, -f3-)" != \
  "$(grep '^a30-8,node-profile/node=1,' "$tmp/z4/zoo_runs.csv" | cut -d, -f3-)" ] || fail "node=N had no effect"

# errors
for bad in "--variants nope" "--variants fa+/t=2" "--variants fa+/wat" "--variants fa+/roomq=-1" \
           "--variants fa+/roomq=1e3" "--variants static/node=0" "--variants static/node=2x" \
           "--only nowhere" \
           "--seeds 0" "--queue lifo" "--jobs-scale -1"; do
    # shellcheck disable=SC2086
    if "$M" zoo --quick $bad --out "$tmp/e" > /dev/null 2> "$tmp/e.txt"; then
        fail "zoo $bad succeeded"
    fi
    grep -q 'migsched zoo' "$tmp/e.txt" || fail "zoo $bad: no message naming the command"
done
echo ok
