#!/usr/bin/env bash
# The docs run as written: the README's "A first look" block and the
# "Simulate" block of docs/cli.md, in a fresh directory, with `migsched` and
# `build/migsched` replaced by the binary under test. Every command must
# exit 0 (check and report included).
set -u
M=${MIGSCHED:-build/migsched}
case "$M" in /*) ;; *) M=$PWD/$M ;; esac
root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
nfail=0

# block FILE MARKER: the commands of the first code block after the line
# matching MARKER, continuation lines joined, comments dropped.
block() {
    awk -v mark="$2" '
        index($0, mark) { armed = 1; next }
        armed && /^```/ { if (inside) exit; inside = 1; next }
        inside {
            line = $0
            sub(/[ \t]+#.*$/, "", line)
            if (line ~ /\\$/) { sub(/\\$/, "", line); acc = acc line; next }
            print acc line; acc = ""
        }' "$1"
}

run_block() {   # FILE MARKER
    local n=0 cmd
    while IFS= read -r cmd; do
        [ -n "${cmd// /}" ] || continue
        cmd=$(printf '%s' "$cmd" | sed -E "s#^(build/)?migsched #\"$M\" #")
        n=$((n + 1))
        if ! (cd "$tmp" && eval "$cmd") >"$tmp/out.txt" 2>&1; then
            echo "FAIL: $1: $cmd"; tail -n 5 "$tmp/out.txt"; nfail=$((nfail + 1))
        fi
    done < <(block "$root/$1" "$2")
    [ "$n" -gt 3 ] || { echo "FAIL: $1: found $n commands after '$2'"; nfail=$((nfail + 1)); }
    echo "$1: $n commands"
}

run_block README.md "A first look"
run_block docs/cli.md "## Simulate"
[ -f "$tmp/report/compare/README.md" ] || { echo "FAIL: no report written"; nfail=$((nfail + 1)); }
[ "$nfail" -eq 0 ] && echo ok
[ "$nfail" -eq 0 ]
