#!/usr/bin/env bash
# The workload zoo and the deployment parameters derived from it
# (docs/zoo.md). Writes report/zoo/{main,validate,fifo,queue,t,migration,
# roomq,nodes*,beta*}/ with zoo.md, CSV and SVG each (queue/ also
# disciplines.md, nodes*/ nodes.md); about ten minutes on 2 shared cores
# after `make`.
#
#   bash scripts/zoo.sh [OUT]        (default OUT = report/zoo)
set -eu
cd "$(dirname "$0")/.."
M=${MIGSCHED:-build/migsched}
out=${1:-report/zoo}
[ -x "$M" ] || make -j2 all >/dev/null
mkdir -p "$out"
t0=$(date +%s)
run() { # name options...
    local name=$1; shift
    echo "== zoo $name: $*" >&2
    "$M" zoo --out "$out/$name" "$@" > "$out/$name.txt"
}
# the headline: every policy on seeds 1-10, then again on seeds 11-20
run main
run validate --seed0 11
# the queue discipline: everything under strict FIFO
run fifo --queue fifo
# the queue disciplines for every policy, against the old default (backfill
# bounded at 3600 s): the table of docs/zoo.md "Queue disciplines"
v=""
for p in fa+ fa first-fit best-fit fgd mfi static node-profile; do
    for q in /backfill /bound=inf /fifo /easy/bound=0 /easy /easy/esterr=1 /bound=inf/aging=1; do
        v="$v,$p$q"
    done
done
run queue --variants "${v#,}"
bash scripts/zoo-queue.sh "$out/queue/zoo.csv" backfill > "$out/queue/disciplines.md"
# the threshold t
run t --variants fa+,fa+/t=0.1,fa+/t=0.2,fa+/t=0.3,fa+/t=0.5,fa+/t=0.6,fa+/t=0.7,fa+/nobal,fa,fa/t=0.1,fa/t=0.7
# the migration cost: fa+ and fa with and without migration, per cost
v=""
for s in 0 10 30 60 120 300; do
    v="$v,fa+/mig=$s,fa+/mig=$s/nomig,fa/mig=$s,fa/mig=$s/nomig"
done
run migration --variants "${v#,}"
# fa+'s queue-depth gate on make_room (room_queue_max, default 32)
run roomq --variants fa+/roomq=8,fa+/roomq=16,fa+/roomq=24,fa+,fa+/roomq=64,fa+/roomq=128,fa+/roomq=1000000000,first-fit,best-fit,fgd,mfi
# node-profile against static on nodes of 1, 2, 4 and 8 GPUs (node=N cuts
# every workload's GPUs into nodes of N): the table of docs/policies.md
v=""
for n in 1 2 4 8; do
    v="$v,static/node=$n,node-profile/node=$n"
done
for s0 in 1 11 21; do
    run "nodes$s0" --seed0 "$s0" --variants "${v#,}"
    bash scripts/zoo-nodes.sh "$out/nodes$s0/zoo.csv" > "$out/nodes$s0/nodes.md"
done
# interference: what migration buys when neighbours cost more
for b in 0.2 0.5 1 2; do
    run "beta$b" --beta "$b" --variants fa+,fa+/nomig,fa,fa/nomig,fgd
done
echo "zoo: $(( $(date +%s) - t0 )) s, reports in $out/*/zoo.md" >&2
