#!/usr/bin/env bash
# The daemon's files form no circle (scripts/check-service-deps.sh: the
# file graph of src/service and src/backend from nm's symbols), and the
# agent and the backends stay out of the daemon: nothing in src/agent,
# src/backend or src/daemon includes a src/service header, and mk/agent.mk
# links no service object.
set -u
cd "$(dirname "$0")/../.."
build=${BUILD:-build-asan}
out=$(bash scripts/check-service-deps.sh "$build") || { echo "$out"; echo "FAIL: a circle between files"; exit 1; }
echo "$out"
inc=$(grep -rn '#include "service/' src/agent src/backend src/daemon)
[ -z "$inc" ] || { echo "$inc"; echo "FAIL: src/service included outside the daemon"; exit 1; }
grep -n 'obj/src/service' mk/agent.mk && { echo "FAIL: mk/agent.mk links a service object"; exit 1; }
# the graph is built from objects: a missing one must not pass for a clean one
[ -e "$build/obj/src/service/loop.o" ] || { echo "FAIL: no objects in $build (build first)"; exit 1; }
echo "ok"
