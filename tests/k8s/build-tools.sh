#!/usr/bin/env bash
# Builds etcd, kube-apiserver, kube-scheduler, kube-controller-manager and the
# kubelet of the pinned release (tests/k8s/tools/go.mod) into a cache outside the repository:
#   ${MIGSCHED_K8S_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/migsched-k8s}/VERSION/bin
# Test infrastructure only; the product stays C.
# Exit 0 when the binaries are there (built now or before), and also exit 0
# with a line "skip: REASON" when they cannot be built here (Go too old or
# absent, module proxy unreachable); callers check the binaries themselves.
# Exit non-zero when a build that should work fails.
set -eu
. "$(dirname "$0")/lib.sh"

say() { echo "build-tools: $*"; }

if ms_k8s_bins_ok; then
    say "cached: $MS_K8S_BIN (kubernetes $MS_K8S_VERSION, etcd $MS_ETCD_VERSION)"
    exit 0
fi

GO=$(ms_k8s_go)
if [ -z "$GO" ]; then
    echo "skip: no go command (Go >= $MS_GO_MIN needed to build the Kubernetes test binaries)"
    exit 0
fi
if ! gov=$(ms_k8s_go_ok "$GO"); then
    echo "skip: ${gov:-unknown Go} is older than go$MS_GO_MIN (needed for Kubernetes $MS_K8S_VERSION)"
    exit 0
fi

cd "$MS_K8S_DIR/tools"
# The pins in lib.sh and go.mod must agree, or the cache would lie.
for m in "k8s.io/kubernetes $MS_K8S_VERSION" "go.etcd.io/etcd/server/v3 $MS_ETCD_VERSION"; do
    grep -q "^[[:space:]]*$m\$\|^[[:space:]]*$m //" go.mod ||
        { echo "build-tools: go.mod does not pin $m (tests/k8s/lib.sh does)" >&2; exit 1; }
done

# -mod=readonly: go.mod and go.sum are committed and must not change here.
# -buildvcs=false: the main module is this tools module inside the migsched
# repository, whose git state says nothing about the binaries.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-mod=readonly -buildvcs=false" CGO_ENABLED=0 GOTOOLCHAIN=local
say "downloading modules (k8s.io/kubernetes $MS_K8S_VERSION, etcd $MS_ETCD_VERSION) with $gov"
if ! out=$("$GO" mod download 2>&1); then
    printf '%s\n' "$out" | tail -n 3 >&2
    echo "skip: cannot download modules from the Go module proxy (GOPROXY=$("$GO" env GOPROXY)); no Kubernetes test binaries"
    exit 0
fi

# One build at a time per cache (several worktrees share it).
mkdir -p "$MS_K8S_CACHE/$MS_K8S_VERSION"
exec 9>"$MS_K8S_CACHE/$MS_K8S_VERSION/build.lock"
if ! flock -n 9; then
    say "another build holds $MS_K8S_CACHE/$MS_K8S_VERSION/build.lock; waiting"
    flock 9
fi
if ms_k8s_bins_ok; then
    say "built meanwhile by another process: $MS_K8S_BIN"
    exit 0
fi
tmp="$MS_K8S_CACHE/$MS_K8S_VERSION/bin.tmp.$$"
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp"
minor=${MS_K8S_VERSION#v*.}; minor=${minor%%.*}
major=${MS_K8S_VERSION#v}; major=${major%%.*}
ld="-s -w"
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$MS_K8S_VERSION -X $p.gitMajor=$major -X $p.gitMinor=$minor"
    ld="$ld -X $p.gitTreeState=clean -X $p.buildDate=1970-01-01T00:00:00Z"
done
say "building etcd, kube-apiserver, kube-scheduler, kube-controller-manager, kubelet into $MS_K8S_BIN (cold: 12-30 min on 2 cores, 5 GB of Go caches)"
start=$(date +%s)
# One go build for all three, so the 2 cores share one package graph. etcd's
# main package is its module root, named "server" by go build (the last
# path element that is not a major version).
"$GO" build -trimpath -ldflags "$ld" -o "$tmp/" go.etcd.io/etcd/server/v3 \
    k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-scheduler \
    k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kubelet
mv "$tmp/server" "$tmp/etcd"
rm -rf "$MS_K8S_BIN"
mv "$tmp" "$MS_K8S_BIN"
trap - EXIT
if ! ms_k8s_bins_ok; then
    echo "build-tools: built binaries do not report the pinned versions:" >&2
    "$MS_K8S_BIN/kube-apiserver" --version >&2 || true
    "$MS_K8S_BIN/etcd" --version >&2 || true
    exit 1
fi
say "built in $(( $(date +%s) - start )) s: $(du -sh "$MS_K8S_BIN" | cut -f1) in $MS_K8S_BIN"
