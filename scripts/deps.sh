#!/usr/bin/env bash
# Installs the Debian packages migsched needs to build and test, if missing.
# Each part of the project lists its packages in scripts/deps/NAME.list (one
# a line, '#' comments), so adding a part never edits this script.
set -eu
cd "$(dirname "$0")/.."
need=()
for p in $(sed 's/#.*//' scripts/deps/*.list); do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}"
fi
