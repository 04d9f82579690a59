#!/usr/bin/env bash
# Installs the Debian packages migsched needs, if missing:
#
#   bash scripts/deps.sh build   what `make` needs: scripts/deps/*.list
#                                (the demo, scripts/demo.sh)
#   bash scripts/deps.sh test    that and what the tests need:
#                                scripts/deps/test/*.list (the test command,
#                                scripts/test.sh; the default)
#
# Each part of the project lists its packages in scripts/deps/NAME.list and
# scripts/deps/test/NAME.list (one a line, '#' comments), so adding a part
# never edits this script.
set -eu
cd "$(dirname "$0")/.."
case "${1:-test}" in
    build) lists=(scripts/deps/*.list) ;;
    test) lists=(scripts/deps/*.list scripts/deps/test/*.list) ;;
    *) echo "usage: scripts/deps.sh [build|test]" >&2; exit 2 ;;
esac
need=()
for p in $(sed 's/#.*//' "${lists[@]}" | sort -u); do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}"
fi
