#!/usr/bin/env bash
# Installs the Debian packages migsched needs to build and test, if missing.
set -eu
need=()
for p in build-essential libcmocka-dev; do
    dpkg -s "$p" >/dev/null 2>&1 || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq "${need[@]}"
fi
