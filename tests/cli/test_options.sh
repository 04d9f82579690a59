#!/usr/bin/env bash
# One option table for every face (include/migsched/options.h, issue 21):
# the same option value gets the same answer from `migsched simulate`, a
# zoo variant string, `migschedd` flags and a migschedd --config line: the
# same message after the option's name, or all accept it. The values are
# the ones two parsers used to disagree on (--seed -1, --seed 2^64-1,
# --lb-threshold 0x0.8) and more. Also: every table option is in
# simulate's --help, every queue and policy option in migschedd's, and
# docs/cli.md's table is `migsched options --markdown`.
set -u
cd "$(dirname "$0")/../.."
M=${MIGSCHED:-build/migsched}
D=${MIGSCHEDD:-$(dirname "$M")/migschedd}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

"$M" gen-trace --jobs 40 --load 0.8 --gpus 2 --seed 4 -o "$tmp/t.csv" >/dev/null || fail gen-trace
NODE_MSG="give at least one --node"   # what migschedd says once every option parsed

# answer FACE OPT VALUE: "ok", or the message after "OPT: " (exit 2); on
# command lines as --OPT=VALUE, the one form a flag takes a value in
answer() {
    local face=$1 opt=$2 val=$3 err rc
    case $face in
    simulate)
        "$M" simulate --trace "$tmp/t.csv" --gpus 2 --policy fa --quiet "--$opt=$val" \
            >/dev/null 2>"$tmp/err"; rc=$? ;;
    zoo)
        "$M" zoo --quick --only a30-8 --seeds 1 --variants "fa/$opt=$val" --out "$tmp/z" \
            >/dev/null 2>"$tmp/err"; rc=$? ;;
    daemon)
        "$D" --state-dir "$tmp/s" "--$opt=$val" >/dev/null 2>"$tmp/err"; rc=$?
        grep -q "$NODE_MSG" "$tmp/err" && rc=0 ;;
    config)
        printf '%s = %s\n' "$opt" "$val" > "$tmp/c.conf"
        "$D" --state-dir "$tmp/s" --config "$tmp/c.conf" >/dev/null 2>"$tmp/err"; rc=$?
        grep -q "$NODE_MSG" "$tmp/err" && rc=0 ;;
    esac
    if [ $rc -eq 0 ]; then echo ok; return; fi
    [ $rc -eq 2 ] || { echo "exit $rc: $(cat "$tmp/err")"; return; }
    err=$(head -n 1 "$tmp/err")
    echo "${err#*"$opt": }"
}

n=0
while read -r opt val; do
    [ -n "$opt" ] || continue
    want=$(answer simulate "$opt" "$val")
    for face in zoo daemon config; do
        got=$(answer $face "$opt" "$val")
        [ "$got" = "$want" ] || fail "--$opt $val: simulate says '$want', $face says '$got'"
    done
    echo "--$opt $val: $want"
    n=$((n + 1))
done <<'CASES'
seed -1
seed 18446744073709551615
seed 18446744073709551616
seed 0x10
lb-threshold 0x0.8
lb-threshold 0.8
lb-threshold 1e999
lb-threshold nan
max-moves 1.5
max-moves 8
replicas 17
queue lifo
queue fifo
backfill-bound inf
aging-rate inf
default-estimate 0
migration maybe
migration false
interference-beta 0.2
CASES
[ "$n" -eq 19 ] || fail "ran $n cases"
# the accepted 2^64 - 1 reached the policy: simulate ran with it
"$M" simulate --trace "$tmp/t.csv" --gpus 2 --policy fa --seed 18446744073709551615 \
    --metrics-out "$tmp/m.json" --quiet || fail "seed 2^64-1"

# every table option in simulate's --help; the queue and policy ones in
# migschedd's; docs/cli.md's table is the table
opts=$("$M" options --markdown | sed -n 's/^| `--\([a-z-]*\).*/\1/p')
[ "$(echo "$opts" | wc -l)" -ge 20 ] || fail "options --markdown lists $(echo "$opts" | wc -l)"
"$M" simulate --help > "$tmp/sh"
"$D" --help > "$tmp/dh"
for o in $opts; do
    grep -q -- "^  --$o\b" "$tmp/sh" || fail "simulate --help lacks --$o"
    scope=$("$M" options --markdown | grep -- "^| \`--$o[ \`]" | cut -d'|' -f3 | tr -d ' ')
    if [ "$o" = tenant ]; then
        # migschedd declares tenants too, with its own row that parses
        # through this one (src/service/config.c)
        grep -q -- "^  --$o\b" "$tmp/dh" || fail "migschedd --help lacks --$o"
    elif [ "$scope" = simulator ]; then
        grep -q -- "^  --$o\b" "$tmp/dh" && fail "migschedd --help lists the simulator's --$o"
    else
        grep -q -- "^  --$o\b" "$tmp/dh" || fail "migschedd --help lacks --$o"
    fi
done
"$M" options --markdown > "$tmp/md"
awk '/<!-- options: migsched options --markdown -->/ { on = 1; next }
     /<!-- end options -->/ { on = 0 } on' docs/cli.md > "$tmp/doc"
diff "$tmp/md" "$tmp/doc" > "$tmp/diff" || { cat "$tmp/diff"; fail "docs/cli.md's option table is not \`migsched options --markdown\`"; }
echo "test_options: ok ($n cases, 4 faces; $(echo "$opts" | wc -l) options documented)"
