#!/usr/bin/env bash
# Runs every test binary under the given directory (cmocka), then the CLI
# tests in tests/cli/*.sh (or $MS_CLI_TESTS/*.sh), and prints one closing line
# "N passed, N failed, N skipped".
#
# Counting: a cmocka binary adds its own counts of passed, failed and
# skipped tests (cmocka's skip()); a CLI script counts as one test. Either
# reports "skipped" by exiting 77 (automake's convention) after printing
# why: it is then counted as skipped, never as passed. Any other non-zero
# exit is a failure. Exits 1 when anything failed; skips alone do not fail.
set -u
dir=${1:-build-asan/tests}
export MIGSCHED=${MIGSCHED:-build-asan/migsched}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pass=0; fail=0; skip=0; failed=()

# count LOG WORD: the sum of cmocka's "[  WORD  ] N test(s)" lines in LOG
count() {
    grep -Eo "^\[ +$2 +\] [0-9]+ test" "$1" | awk '{s+=$(NF-1)} END {print s+0}'
}
# why LOG: the reason a skipped test printed (its last line)
why() { tail -n 1 "$1" | cut -c1-160; }

while IFS= read -r t; do
    t0=$SECONDS
    "$t" >"$t.log" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
    p=$(count "$t.log" PASSED); f=$(count "$t.log" FAILED); s=$(count "$t.log" SKIPPED)
    if [ $rc -eq 77 ]; then
        skip=$((skip + 1)); echo "skip $t: $(why "$t.log")"
    elif [ $rc -eq 0 ] && [ "$f" -eq 0 ]; then
        pass=$((pass + p)); skip=$((skip + s))
        echo "ok   $t ($p$([ "$s" -gt 0 ] && echo ", $s skipped"), $secs s)"
    else
        [ "$f" -eq 0 ] && f=1
        pass=$((pass + p)); fail=$((fail + f)); skip=$((skip + s)); failed+=("$t")
        echo "FAIL $t"; tail -n 40 "$t.log"
    fi
done < <(find "$dir" -type f -perm -u+x -name 'test_*' | sort)
for s in "${MS_CLI_TESTS:-tests/cli}"/*.sh; do
    [ -e "$s" ] || continue
    log=$dir/$(basename "$s").log
    t0=$SECONDS
    bash "$s" >"$log" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
    if [ $rc -eq 0 ]; then
        pass=$((pass + 1)); echo "ok   $s ($secs s)"
    elif [ $rc -eq 77 ]; then
        skip=$((skip + 1)); echo "skip $s: $(why "$log")"
    else
        fail=$((fail + 1)); failed+=("$s"); echo "FAIL $s"; tail -n 40 "$log"
    fi
done
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
