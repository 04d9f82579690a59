#!/usr/bin/env bash
# Every policy's schedules and metrics, byte for byte, against the fixture
# recorded before the scheduling loop moved into ms_sched (tests/regress/).
set -eu
cd "$(dirname "$0")/../.."
MIGSCHED=${MIGSCHED:-build/migsched} bash tests/regress/regress.sh check
