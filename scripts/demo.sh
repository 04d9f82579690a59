#!/usr/bin/env bash
# The demo: installs what is missing, builds, runs the default experiment.
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
make -j"$(nproc)" all
./build/migsched experiment "$@"
