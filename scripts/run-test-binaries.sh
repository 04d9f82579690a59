#!/usr/bin/env bash
# Runs every test binary under the given directory (cmocka), then the CLI
# tests in tests/cli/*.sh, and prints one closing line "N passed, N failed".
set -u
dir=${1:-build-asan/tests}
export MIGSCHED=${MIGSCHED:-build-asan/migsched}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
pass=0; fail=0; failed=()
while IFS= read -r t; do
    if "$t" >"$t.log" 2>&1; then
        n=$(grep -Eo '\[  PASSED  \] [0-9]+' "$t.log" | awk '{s+=$4} END {print s+0}')
        pass=$((pass + n))
        echo "ok   $t ($n)"
    else
        n=$(grep -Eo '\[  FAILED  \] [0-9]+' "$t.log" | awk '{s+=$4} END {print s+0}')
        [ "$n" -eq 0 ] && n=1
        fail=$((fail + n)); failed+=("$t")
        echo "FAIL $t"; tail -n 40 "$t.log"
    fi
done < <(find "$dir" -type f -perm -u+x -name 'test_*' | sort)
for s in tests/cli/*.sh; do
    [ -e "$s" ] || continue
    if bash "$s" >"$dir/$(basename "$s").log" 2>&1; then
        pass=$((pass + 1)); echo "ok   $s"
    else
        fail=$((fail + 1)); failed+=("$s"); echo "FAIL $s"; tail -n 40 "$dir/$(basename "$s").log"
    fi
done
echo
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
