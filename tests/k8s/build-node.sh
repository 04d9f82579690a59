#!/usr/bin/env bash
# Builds the container runtime of the test nodes (tests/k8s/node.sh):
# containerd, containerd-shim-runc-v2 and ctr of the pinned containerd 2.x
# release, from its Go module, into a cache outside the repository:
#   ${MIGSCHED_K8S_CACHE:-...}/containerd-VERSION/bin
# (the kubelet comes from build-tools.sh, runc and busybox from Debian:
# scripts/deps/test/rpc.list). Test infrastructure only; the product stays C.
#
# Debian 12's containerd (1.6.20) predates CDI, so it will not do. The
# module cannot be built with `go install` (its go.mod has exclude lines),
# so the module is downloaded, copied out of the read-only module cache and
# built inside itself with -mod=mod, which honours its own go.mod.
# Exit 0 when the binaries are there (built now or before), and also exit 0
# with a line "skip: REASON" when they cannot be built here (no Go >= the
# version containerd's go.mod needs, no module proxy); callers check the
# binaries. Exit non-zero when a build that should work fails.
set -eu
. "$(dirname "$0")/lib.sh"

say() { echo "build-node: $*"; }

if ms_node_bins_ok; then
    say "cached: $MS_NODE_BIN (containerd $MS_CONTAINERD_VERSION)"
    exit 0
fi
GO=$(ms_k8s_go)
[ -n "$GO" ] || { echo "skip: no go command (Go >= $MS_GO_MIN needed to build containerd)"; exit 0; }
gov=$(ms_k8s_go_ok "$GO") || { echo "skip: ${gov:-unknown Go} is older than go$MS_GO_MIN"; exit 0; }

export GOFLAGS="-buildvcs=false" CGO_ENABLED=0 GOTOOLCHAIN=local
mod=github.com/containerd/containerd/v2@$MS_CONTAINERD_VERSION
say "downloading $mod with $gov"
if ! json=$("$GO" mod download -json "$mod" 2>&1); then
    printf '%s\n' "$json" | tail -n 3 >&2
    echo "skip: cannot download $mod from the Go module proxy"
    exit 0
fi
src=$(printf '%s\n' "$json" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$src" ] || { echo "build-node: no module directory in: $json" >&2; exit 1; }
need=$(sed -n 's/^go \([0-9.]*\)$/\1/p' "$src/go.mod")
if ! printf '%s\n%s\n' "$need" "${gov#go}" | sort -V -C; then
    echo "skip: containerd $MS_CONTAINERD_VERSION needs go $need, this is $gov"
    exit 0
fi

top="$MS_K8S_CACHE/containerd-$MS_CONTAINERD_VERSION"
mkdir -p "$top"
exec 9>"$top/build.lock"
if ! flock -n 9; then
    say "another build holds $top/build.lock; waiting"
    flock 9
fi
if ms_node_bins_ok; then
    say "built meanwhile by another process: $MS_NODE_BIN"
    exit 0
fi
work="$top/src.$$"
tmp="$top/bin.tmp.$$"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work" "$tmp"' EXIT
cp -r "$src" "$work"
chmod -R u+w "$work"
mkdir -p "$tmp"
pkg=github.com/containerd/containerd/v2
ld="-s -w -X $pkg/version.Version=$MS_CONTAINERD_VERSION -X $pkg/version.Revision=module-proxy -X $pkg/version.Package=$pkg"
say "building containerd, containerd-shim-runc-v2, ctr into $MS_NODE_BIN"
start=$(date +%s)
# no_btrfs: the btrfs snapshotter needs cgo; the nodes use overlayfs.
# The shim is built like upstream builds it (no_grpc: ttrpc only).
( cd "$work" &&
  "$GO" build -mod=mod -trimpath -tags "urfave_cli_no_docs no_btrfs" -ldflags "$ld" -o "$tmp/" \
      ./cmd/containerd ./cmd/ctr &&
  "$GO" build -mod=mod -trimpath -tags "urfave_cli_no_docs no_btrfs no_grpc" -ldflags "$ld" -o "$tmp/" \
      ./cmd/containerd-shim-runc-v2 )
rm -rf "$MS_NODE_BIN"
mv "$tmp" "$MS_NODE_BIN"
if ! ms_node_bins_ok; then
    echo "build-node: the built containerd does not report $MS_CONTAINERD_VERSION:" >&2
    "$MS_NODE_BIN/containerd" --version >&2 || true
    exit 1
fi
say "built in $(( $(date +%s) - start )) s: $(du -sh "$MS_NODE_BIN" | cut -f1) in $MS_NODE_BIN"
