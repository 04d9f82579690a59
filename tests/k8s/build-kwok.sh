#!/usr/bin/env bash
# Builds KWOK's controller (sigs.k8s.io/kwok/cmd/kwok, pinned below) into a
# cache outside the repository, next to build-tools.sh's binaries:
#   ${MIGSCHED_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/migsched-k8s}/kwok-VERSION/bin/kwok
# KWOK fakes thousands of nodes (heartbeats) and their pods (Running,
# then Succeeded) against a control plane (bench_ext_kwok.sh). Test
# infrastructure only; the product stays C.
# Its own module (KWOK's go.mod and go.sum, verified by the checksum
# database on download) in a temporary copy, not tests/k8s/tools/go.mod:
# KWOK's client-go pins must not move the Kubernetes binaries' versions.
# Also copies KWOK's default stages (kustomize/stage/...) to
# kwok-VERSION/bin/stages/.
# Exit 0 when the binary is there (built now or before); exit 77 with a line
# "skip: REASON" when it cannot be built here (Go too old or absent, module
# proxy unreachable). Exit 1 when a build that should work fails.
set -eu
. "$(dirname "$0")/lib.sh"

say() { echo "build-kwok: $*"; }
skip() { echo "skip: $*"; exit 77; }

if ms_kwok_bin_ok; then
    say "cached: $MS_KWOK_BIN/kwok (kwok $MS_KWOK_VERSION)"
    exit 0
fi

GO=$(ms_k8s_go)
[ -n "$GO" ] || skip "no go command (Go >= $MS_GO_MIN needed to build kwok $MS_KWOK_VERSION)"
gov=$(ms_k8s_go_ok "$GO") || skip "${gov:-unknown Go} is older than go$MS_GO_MIN (needed for kwok $MS_KWOK_VERSION)"

# -mod=readonly: KWOK's go.mod and go.sum as released. -buildvcs=false: the
# copy is no repository.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly -buildvcs=false" CGO_ENABLED=0 GOTOOLCHAIN=local
say "downloading sigs.k8s.io/kwok@$MS_KWOK_VERSION and its modules with $gov"
if ! src=$(cd / && GOFLAGS=-mod=mod "$GO" mod download -json "sigs.k8s.io/kwok@$MS_KWOK_VERSION" 2>&1 |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') || [ -z "$src" ] || [ ! -f "$src/go.mod" ]; then
    skip "cannot download sigs.k8s.io/kwok@$MS_KWOK_VERSION from the Go module proxy (GOPROXY=$("$GO" env GOPROXY)); no kwok"
fi

# One build at a time per cache (several worktrees share it).
mkdir -p "$MS_K8S_CACHE/kwok-$MS_KWOK_VERSION"
exec 9>"$MS_K8S_CACHE/kwok-$MS_KWOK_VERSION/build.lock"
if ! flock -n 9; then
    say "another build holds $MS_K8S_CACHE/kwok-$MS_KWOK_VERSION/build.lock; waiting"
    flock 9
fi
if ms_kwok_bin_ok; then
    say "built meanwhile by another process: $MS_KWOK_BIN/kwok"
    exit 0
fi
tmp="$MS_K8S_CACHE/kwok-$MS_KWOK_VERSION/bin.tmp.$$"
work=$(mktemp -d "${TMPDIR:-/tmp}/migsched-kwok-src.XXXXXX")
trap 'rm -rf "$tmp" "$work"' EXIT
mkdir -p "$tmp"
# The module cache is read-only; the build runs in a writable copy.
cp -r "$src/." "$work/"
chmod -R u+w "$work"
cd "$work"
if ! out=$("$GO" mod download 2>&1); then
    printf '%s\n' "$out" | tail -n 3 >&2
    skip "cannot download kwok's modules from the Go module proxy (GOPROXY=$("$GO" env GOPROXY)); no kwok"
fi
say "building kwok $MS_KWOK_VERSION into $MS_KWOK_BIN (cold: about 95 s on 2 cores)"
start=$(date +%s)
"$GO" build -trimpath -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=${MS_KWOK_VERSION#v}" \
    -o "$tmp/kwok" ./cmd/kwok
# The default stages kwokctl gives a kwok (pkg/kwokctl/runtime/cluster.go):
# a node made Ready, its heartbeat (with a Lease, or by status alone), pods
# made Running, a Job's pods Succeeded, deleted pods removed. kwok alone has
# none; bench_ext_kwok.sh passes them with --config.
mkdir -p "$tmp/stages"
for f in node/fast/node-initialize node/heartbeat-with-lease/node-heartbeat-with-lease \
        node/heartbeat/node-heartbeat pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
    cp "kustomize/stage/$f.yaml" "$tmp/stages/"
done
rm -rf "$MS_KWOK_BIN"
mv "$tmp" "$MS_KWOK_BIN"
if ! ms_kwok_bin_ok; then
    echo "build-kwok: the built kwok does not report version $MS_KWOK_VERSION:" >&2
    "$MS_KWOK_BIN/kwok" --version >&2 || true
    exit 1
fi
say "built in $(( $(date +%s) - start )) s: $(du -sh "$MS_KWOK_BIN" | cut -f1) in $MS_KWOK_BIN"
