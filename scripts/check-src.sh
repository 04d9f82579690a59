#!/usr/bin/env bash
# The source rules a compiler does not check, over src/ and include/
# (tests/cli/test_check_src.sh runs this; so does CI through the suite).
# Each rule prints its offenders as FILE[:LINE]: WHAT; the script exits 1 if
# any rule has one.
#
#  1. banned calls in src/: atoi/atol (no error check), sprintf/strcpy/
#     strcat/gets (unbounded), strtok (hidden state; use strtok_r),
#     rand/srand (use src/core/rng.c);
#  2. sizes: no file over 800 lines; no function over 150 lines. A function
#     runs from its signature (the last line at column 0 that starts with a
#     letter or '_' before the line that opens its body with '{' at column
#     0) to the line that closes it with '}' at column 0, both counted;
#  3. layering: no include of a private header (*_int.h) from another
#     folder; nothing in src/agent includes src/service; the library (src/
#     core policy sched io sim research advise control) includes none of
#     the faces (cli, client, service, agent, nvml, kube, k8sconf) and never
#     prints or exits; each library folder includes only the public headers
#     of its own layer and the ones below (docs/design.md, "Layers"); the
#     include graph of include/migsched is acyclic.
#
# scripts/check-src.allow lists what is allowed to break rules 2 and 3 for
# now, one entry a line: PATH (a file over 800 lines, or a file of
# src/agent that includes src/service) or PATH:FUNCTION (a function over
# 150 lines). An entry that no longer matches an offender is an error too:
# the list may only shrink.
set -u
shopt -s lastpipe   # report, at the end of a pipeline, runs in this shell: status sticks
cd "$(dirname "$0")/.."
allow=scripts/check-src.allow
status=0
used=$(mktemp)
trap 'rm -f "$used"' EXIT

# allowed KEY: whether KEY is in the allow-list (and note that it was used)
allowed() {
    if grep -qxF -- "$1" <(sed 's/#.*//; s/[[:space:]]*$//' "$allow" 2>/dev/null); then
        echo "$1" >> "$used"
        return 0
    fi
    return 1
}
report() {   # TITLE, offenders on stdin
    local hits
    hits=$(cat)
    [ -z "$hits" ] && return
    echo "check-src: $1:"
    echo "$hits"
    status=1
}

srcs=$(find src include -name '*.[ch]' | sort)

# 1. banned calls
grep -rnE '\b(atoi|atol|atoll|sprintf|vsprintf|strcpy|strcat|gets|strtok|rand|srand)[[:space:]]*\(' \
     src --include='*.c' --include='*.h' | grep -vE '^\S+:[0-9]+:\s*(/?\*|//)' |
    report "banned calls in src/"

# 2. sizes
for f in $srcs; do
    n=$(wc -l < "$f")
    [ "$n" -gt 800 ] && ! allowed "$f" && echo "$f: $n lines (at most 800)"
done | report "files over 800 lines"
# shellcheck disable=SC2086
awk '
FNR == 1 { sig = 0; open = 0 }
/^[A-Za-z_]/ && !open { sig = FNR; text = $0 }
/^\{/ && !open {
    open = 1
    name = text; sub(/\(.*/, "", name); gsub(/.*[ *]/, "", name)
    if (sig == 0) sig = FNR
}
/^\}/ && open {
    if (FNR - sig + 1 > 150) print FILENAME ":" name ":" sig ":" FNR - sig + 1
    open = 0; sig = 0
}' $srcs | while IFS=: read -r f fn line len; do
    allowed "$f:$fn" || echo "$f:$line: $fn is $len lines (at most 150)"
done | report "functions over 150 lines"

# 3. layering
# a private header (*_int.h) from another folder
for f in $srcs; do
    dir=$(dirname "$f")
    grep -nE '^[[:space:]]*#[[:space:]]*include[[:space:]]+"[^"]*_int\.h"' "$f" |
        while IFS= read -r hit; do
            h=$(echo "$hit" | sed -E 's/.*"([^"]*)".*/\1/')
            [ "$(dirname "src/$h")" = "$dir" ] || echo "$f:${hit%%:*}: includes $h"
        done
done | report "private headers (*_int.h) included from another folder"
# src/agent includes nothing of src/service
for f in $(find src/agent -name '*.[ch]' 2>/dev/null | sort); do
    grep -nE '#[[:space:]]*include[[:space:]]+"service/' "$f" | sed "s|^|$f:|" |
        while IFS= read -r hit; do allowed "$f" || echo "$hit"; done
done | report "src/agent includes src/service"
# the library: no faces, no printing, no exit
lib="src/core src/policy src/sched src/io src/sim src/research src/advise src/control"
# shellcheck disable=SC2086
grep -rnE '#[[:space:]]*include[[:space:]]+"(cli|client|service|agent|nvml|kube|k8sconf)/' $lib |
    report "the library includes a face"
# shellcheck disable=SC2086
grep -rnE '\b(printf|puts|putchar|perror|exit|abort)[[:space:]]*\(|fprintf[[:space:]]*\([[:space:]]*(stderr|stdout)' \
     $lib --include='*.c' --include='*.h' | grep -vE '^\S+:[0-9]+:\s*(/?\*|//)' |
    report "the library prints or exits"
# each library folder: the public headers of its layer and below. Layers,
# bottom up: core (status version geometry frag cluster plan rank rng job,
# and io's json_write and number, which need nothing), policy (policy),
# sched (nodes sched), io (trace segment schedule check slicemap), control
# (lease nodecfg: status only), sim (sim options), then research and
# advise. A rule: FOLDER, and the headers it may not include.
while read -r dir banned; do
    [ -d "$dir" ] || continue
    grep -rnE "#[[:space:]]*include[[:space:]]+\"migsched/($banned)\\.h\"" "$dir" \
        --include='*.c' --include='*.h'
done <<'RULES' | report "the library's layers (docs/design.md): a folder includes a layer above it"
src/core policy|nodes|sched|trace|segment|schedule|check|slicemap|sim|options|advise|lease|nodecfg|research/[a-z_]+
src/policy nodes|sched|trace|segment|schedule|check|slicemap|sim|options|advise|lease|nodecfg|research/[a-z_]+
src/sched trace|segment|schedule|check|slicemap|sim|options|advise|lease|nodecfg|research/[a-z_]+
src/io policy|sched|sim|options|advise|lease|nodecfg|research/[a-z_]+
src/control policy|nodes|sched|trace|segment|schedule|check|slicemap|sim|options|advise|research/[a-z_]+
src/sim schedule|check|advise|lease|nodecfg|research/[a-z_]+
RULES
# the public headers' include graph has no cycle
for h in $(find include/migsched -name '*.h' | sort); do
    grep -oE '#[[:space:]]*include[[:space:]]+"migsched/[^"]+"' "$h" |
        sed -E 's/.*"migsched\/([^"]+)"/\1/' | sed "s|^|${h#include/migsched/} |"
done > "$used.graph"
tsort "$used.graph" >/dev/null 2>"$used.err" || { sed 's/^/  /' "$used.err"; } |
    report "the include graph of include/migsched has a cycle"
rm -f "$used.graph" "$used.err"

# every allow-list entry still matches an offender: the list only shrinks
if [ -f "$allow" ]; then
    sed 's/#.*//; s/[[:space:]]*$//' "$allow" | grep -v '^$' | while IFS= read -r e; do
        grep -qxF -- "$e" "$used" || echo "$allow: '$e' breaks no rule any more: remove it"
    done | report "stale allow-list entries"
fi

[ $status -eq 0 ] && echo "check-src: ok"
exit $status
