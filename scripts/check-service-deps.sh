#!/usr/bin/env bash
# The file-level dependency graph of the daemon (src/service/) and the
# backends (src/backend/), from their objects' symbols: file A depends on
# file B when A's object leaves a symbol undefined that B's object defines
# (nm). A circle between files (A -> B -> ... -> A) fails the check and is
# printed, so each file keeps one job: a helper two files need goes into a
# third that needs neither.
#
#   scripts/check-service-deps.sh [BUILD_DIR]   (default: build-asan, else build)
#   DEPS_SHOW=1 also prints every edge.
set -u
cd "$(dirname "$0")/.."
build=${1:-}
if [ -z "$build" ]; then
    if [ -d build-asan/obj/src/service ]; then build=build-asan; else build=build; fi
fi
objs=()
for d in src/service src/backend; do
    for o in "$build/obj/$d"/*.o; do
        f=${o#"$build/obj/"}
        [ -e "${f%.o}.c" ] && objs+=("$o")   # not an object of a file since removed
    done
done
if [ "${#objs[@]}" -eq 0 ]; then
    echo "check-service-deps: no objects under $build/obj/src/{service,backend} (build first)"
    exit 2
fi
# one line per symbol: "D file sym" (defined, global) or "U file sym"
for o in "${objs[@]}"; do
    f=${o#"$build/obj/"}
    f=${f%.o}.c
    nm -P "$o" | awk -v f="$f" '$2 == "U" { print "U", f, $1; next }
                                 $2 ~ /^[TDBRCGSV]$/ { print "D", f, $1 }'
done | python3 -c '
import sys, os
defs, uses = {}, []
for line in sys.stdin:
    kind, f, sym = line.split()
    if kind == "D":
        defs[sym] = f
    else:
        uses.append((f, sym))
edges = {}
for f, sym in uses:
    g = defs.get(sym)
    if g is not None and g != f:
        edges.setdefault(f, {}).setdefault(g, sym)
files = sorted(set(defs.values()) | set(f for f, _ in uses))
if os.environ.get("DEPS_SHOW"):
    for f in files:
        for g, sym in sorted(edges.get(f, {}).items()):
            print(f"{f} -> {g} ({sym})")
# Tarjan: every strongly connected component of more than one file holds a circle
index, low, onstack, stack, sccs, n = {}, {}, set(), [], [], [0]
sys.setrecursionlimit(10000)
def visit(v):
    index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); onstack.add(v)
    for w in edges.get(v, {}):
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in onstack:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop(); onstack.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: sccs.append(sorted(comp))
for f in files:
    if f not in index: visit(f)
def circle(comp):
    # a shortest path back to the start, inside the component
    start, inside = comp[0], set(comp)
    prev, frontier = {start: None}, [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in edges.get(v, {}):
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None: path.append(prev[path[-1]])
                    path.reverse()
                    return path + [start]
                if w in inside and w not in prev:
                    prev[w] = v; nxt.append(w)
        frontier = nxt
    return comp
nedges = sum(len(v) for v in edges.values())
if sccs:
    for comp in sccs:
        c = circle(comp)
        steps = [f"{a} -({edges[a][b]})-> {b}" for a, b in zip(c, c[1:])]
        print("check-service-deps: circle: " + "  ".join(steps))
    print(f"check-service-deps: {len(sccs)} circle(s) among {len(files)} files")
    sys.exit(1)
print(f"check-service-deps: ok: {len(files)} files, {nedges} file-to-file dependencies, no circle")
'
