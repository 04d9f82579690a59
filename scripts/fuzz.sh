#!/usr/bin/env bash
# Builds every libFuzzer harness (make fuzz: clang, ASan, UBSan with
# float-cast-overflow) and runs each over a copy of its seed corpus
# fuzz/corpus/NAME/ for SECONDS (default 30), as many at once as there are
# CPUs. Any crash, sanitizer report, leak, timeout or oversized allocation
# fails it. Prints one line per harness and closes with
# "fuzz: N passed, M failed"; exits 1 on any failure.
#
#   bash scripts/fuzz.sh [SECONDS]
set -u
cd "$(dirname "$0")/.."
secs=${1:-30}
case "$secs" in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [SECONDS]" >&2; exit 2 ;; esac
if ! command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1; then
    echo "fuzz: clang not found (scripts/deps/test/fuzz.list; run scripts/deps.sh test)"
    echo "fuzz: 0 passed, 1 failed"
    exit 1
fi
if ! make -j"$(nproc)" fuzz >build-fuzz.log 2>&1; then
    tail -n 40 build-fuzz.log
    echo "fuzz: 0 passed, 1 failed"
    exit 1
fi
out=build-fuzz/runs
rm -rf "$out"
mkdir -p "$out"

run_one() {   # NAME SECONDS OUTDIR
    local name=$1 secs=$2 out=$3 work=build-fuzz/corpus/$1
    mkdir -p "$work"
    [ -d "fuzz/corpus/$name" ] && cp -f fuzz/corpus/"$name"/* "$work"/ 2>/dev/null
    # -timeout: one input may not run 10 s; -malloc_limit_mb: no input may
    # size an allocation beyond 512 MB; findings go to $out/NAME-*.
    if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
       UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
       "build-fuzz/fuzz/fuzz_$name" -max_total_time="$secs" -timeout=10 \
           -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 \
           -artifact_prefix="$out/$name-" "$work" >"$out/$name.log" 2>&1; then
        echo "ok   fuzz $name ($(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$out/$name.log" | grep -Eo '[0-9]+$') runs)"
    else
        echo "FAIL fuzz $name"
        grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$out/$name.log" | head -n 20
        return 1
    fi
}
export -f run_one

names=$(for f in fuzz/fuzz_*.c; do n=${f#fuzz/fuzz_}; echo "${n%.c}"; done)
printf '%s\n' $names | xargs -P "$(nproc)" -I{} bash -c 'run_one "$1" "$2" "$3"' _ {} "$secs" "$out" \
    | tee "$out/summary.txt"
pass=$(grep -c '^ok' "$out/summary.txt")
fail=$(grep -c '^FAIL' "$out/summary.txt")
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
