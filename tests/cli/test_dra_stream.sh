#!/usr/bin/env bash
# The DRA comparison's stream replayed outside the control plane
# (docs/dra.md, "Why 7g and 4g wait"): scripts/dra-stream-bound.py's own
# model of a work-conserving schedule must give every pod the start that
# `migsched simulate --policy first-fit` gives it (its figures stand on
# that), and scripts/dra-stream-sim.sh must print a row for each variant.
set -eu
M=${MIGSCHED:-build/migsched}
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "skipped: no python3"; exit 77; }

out=$(MIGSCHED=$M python3 scripts/dra-stream-bound.py --seeds 6 --samples 2) || fail "dra-stream-bound.py: $out"
echo "$out" | grep -q '^model check: .*6 seeds: every start equal$' || fail "model check: $out"
# first fit's row, the online rule's, and the three hindsight rows for the 2 x 2 schedules
echo "$out" | grep -Eq '^\| first fit \| 1 \| [0-9.]+ \| [0-9.]+ \|$' || fail "no first-fit row: $out"
[ "$(echo "$out" | grep -c '^| best .* in hindsight | 4 |')" -eq 3 ] || fail "hindsight rows: $out"
echo "$out" | grep -q '^| an online rule told every hold (keep_free_fit) | 1 |' || fail "no online row: $out"

rows=$(MIGSCHED=$M bash scripts/dra-stream-sim.sh 2 20) || fail "dra-stream-sim.sh: $rows"
[ "$(echo "$rows" | grep -Ec '^\| [a-z].*( \| [0-9]+\.[0-9]{2}){6} \|$')" -eq 8 ] || fail "dra-stream-sim rows: $rows"
echo ok
