#!/usr/bin/env bash
# The test command: installs what is missing, then runs
#   1. the test suite built with gcc, ASan and UBSan (make check),
#   2. the same suite built with clang, ASan, UBSan and float-cast-overflow
#      (make check-clang, mk/fuzz.mk),
#   3. every libFuzzer harness for FUZZ_SECONDS each (default 20;
#      scripts/fuzz.sh),
# and closes with one line "N passed, N failed, N skipped" over all three
# (a phase that fails before it counts, e.g. a build error, counts as one
# failure; a test that cannot run here exits 77 and counts as skipped,
# never as passed: scripts/run-test-binaries.sh). Exits 1 only on failures.
set -u
cd "$(dirname "$0")/.."
bash scripts/deps.sh test || { echo "0 passed, 1 failed, 0 skipped"; exit 1; }
pass=0
fail=0
skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# phase NAME COMMAND...: run it, show its output with its closing count
# renamed "NAME: ...", and add that count to the totals. The closing line
# is "[fuzz: ]N passed, N failed[, N skipped]".
count_re='^(fuzz: )?[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$'
phase() {
    local name=$1 rc line p f s
    shift
    "$@" 2>&1 | tee "$log" | sed -E "s/^(fuzz: )?([0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?)$/$name: \\2/"
    rc=${PIPESTATUS[0]}
    line=$(grep -E "$count_re" "$log" | tail -n 1)
    if [ -n "$line" ]; then
        p=$(echo "$line" | grep -Eo '[0-9]+ passed' | grep -Eo '[0-9]+')
        f=$(echo "$line" | grep -Eo '[0-9]+ failed' | grep -Eo '[0-9]+')
        s=$(echo "$line" | grep -Eo '[0-9]+ skipped' | grep -Eo '[0-9]+')
    else
        p=0
        f=1
    fi
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1
    pass=$((pass + p))
    fail=$((fail + f))
    skip=$((skip + ${s:-0}))
}

phase gcc make -j"$(nproc)" check
phase clang make -j"$(nproc)" check-clang
phase fuzz bash scripts/fuzz.sh "${FUZZ_SECONDS:-20}"
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
