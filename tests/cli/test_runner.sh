#!/usr/bin/env bash
# The test runner's counts (scripts/run-test-binaries.sh): a test that exits
# 77 is skipped, never passed; cmocka's own skipped tests are counted as
# skipped; any other non-zero exit is a failure; the closing line is
# "N passed, N failed, N skipped" and only failures make the runner fail.
# Runs the runner on fake tests in a scratch directory.
set -u
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
mkdir -p "$tmp/bin/x" "$tmp/cli"
fake() {   # PATH EXIT-CODE OUTPUT
    printf '#!/bin/sh\nprintf "%%s\\n" "%s"\nexit %s\n' "$3" "$2" > "$1"
    chmod +x "$1"
}
# cmocka binaries: 3 passed; 2 passed and 1 skipped by skip(); a whole binary skipped
fake "$tmp/bin/x/test_a" 0 '[  PASSED  ] 3 test(s).'
fake "$tmp/bin/x/test_b" 0 '[  PASSED  ] 2 test(s).
[  SKIPPED ] 1 test(s), listed below:
[  SKIPPED ] needs_trace'
fake "$tmp/bin/x/test_c" 77 'no GPU here'
# CLI scripts: one passes, two skip, none fails
printf 'echo ok\n' > "$tmp/cli/test_ok.sh"
printf 'echo "skip: no chromium"; exit 77\n' > "$tmp/cli/test_s1.sh"
printf 'echo "skip: no go"; exit 77\n' > "$tmp/cli/test_s2.sh"
out=$(MS_CLI_TESTS=$tmp/cli bash scripts/run-test-binaries.sh "$tmp/bin" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 0 ] || fail "skips alone made the runner fail (exit $rc)"
[ "$(echo "$out" | tail -n 1)" = "6 passed, 0 failed, 4 skipped" ] || fail "closing line: $(echo "$out" | tail -n 1)"
echo "$out" | grep -q '^skip .*test_s1.sh: skip: no chromium$' || fail "a skip does not say why"
# a failure still fails, and a skip never turns into a pass
printf 'echo broken; exit 1\n' > "$tmp/cli/test_bad.sh"
out=$(MS_CLI_TESTS=$tmp/cli bash scripts/run-test-binaries.sh "$tmp/bin" 2>&1)
[ $? -ne 0 ] || fail "a failing test did not fail the runner"
[ "$(echo "$out" | tail -n 1)" = "6 passed, 1 failed, 4 skipped" ] || fail "closing line: $(echo "$out" | tail -n 1)"
echo "test_runner: ok"
