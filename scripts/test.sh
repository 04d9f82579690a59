#!/usr/bin/env bash
# The test command: installs what is missing, builds with ASan+UBSan, runs all tests.
set -eu
cd "$(dirname "$0")/.."
bash scripts/deps.sh
make -j"$(nproc)" check
