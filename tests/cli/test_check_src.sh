#!/usr/bin/env bash
# Style is checked by a tool, not a reviewer: no unbounded or stateful libc
# calls in src/ (scripts/check-src.sh lists them).
exec bash "$(dirname "$0")/../../scripts/check-src.sh"
