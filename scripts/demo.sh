#!/usr/bin/env bash
# The demo: installs what the build needs (scripts/deps/*.list, not the
# test tools), builds, runs the default experiment.
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh build
make -j"$(nproc)" all
./build/migsched experiment "$@"
