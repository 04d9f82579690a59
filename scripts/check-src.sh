#!/usr/bin/env bash
# Rejects C library calls that invite overflows or hidden state in src/:
# atoi/atol (no error check), sprintf/strcpy/strcat/gets (unbounded),
# strtok (hidden state; use strtok_r), rand/srand (use src/core/rng.c).
set -u
cd "$(dirname "$0")/.."
hits=$(grep -rnE '\b(atoi|atol|atoll|sprintf|vsprintf|strcpy|strcat|gets|strtok|rand|srand)[[:space:]]*\(' \
       src --include='*.c' --include='*.h' | grep -vE '^\S+:[0-9]+:\s*(/?\*|//)')
if [ -n "$hits" ]; then
    echo "check-src: banned calls in src/:"
    echo "$hits"
    exit 1
fi
echo "check-src: ok"
