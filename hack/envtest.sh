#!/usr/bin/env bash
# Provides the envtest binaries (kube-apiserver, etcd) and prints the folder that holds them,
# for KUBEBUILDER_ASSETS.
#
# It first tries the normal way (setup-envtest, which downloads release binaries). Where that
# download is not reachable (offline CI, air-gapped labs) it builds both binaries once from their
# Go modules, which only needs the Go module proxy, into a git-ignored cache. Nothing that is
# already there is rebuilt. Progress goes to stderr; stdout carries only the folder.
set -euo pipefail

K8S_VERSION="${ENVTEST_K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ENVTEST_ETCD_VERSION:-3.6.16}"
SETUP_ENVTEST_VERSION="${SETUP_ENVTEST_VERSION:-release-0.24}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN_DIR="${ENVTEST_BIN_DIR:-$ROOT/bin/k8s}"
DEST="$BIN_DIR/$K8S_VERSION"

log() { echo "envtest: $*" >&2; }

have_binaries() { [ -x "$1/kube-apiserver" ] && [ -x "$1/etcd" ]; }

if have_binaries "$DEST"; then
  echo "$DEST"
  exit 0
fi

# 1. The normal download. A short timeout: offline, it would otherwise hang on DNS or TCP.
if [ -z "${ENVTEST_SKIP_DOWNLOAD:-}" ]; then
  log "trying setup-envtest $SETUP_ENVTEST_VERSION for Kubernetes $K8S_VERSION"
  if dir=$(timeout 120 go run "sigs.k8s.io/controller-runtime/tools/setup-envtest@$SETUP_ENVTEST_VERSION" \
      use "$K8S_VERSION" --bin-dir "$BIN_DIR/download" -p path 2>/dev/null) && have_binaries "$dir"; then
    mkdir -p "$DEST"
    cp "$dir/kube-apiserver" "$dir/etcd" "$DEST/"
    echo "$DEST"
    exit 0
  fi
  log "download not available; building from Go modules instead (once, cached in $DEST)"
fi

export GOFLAGS="${GOFLAGS:-} -mod=mod"
export GOTOOLCHAIN=local
work="$BIN_DIR/.build"
mkdir -p "$DEST" "$work"

# 2a. etcd: an ordinary Go module (about a minute).
if [ ! -x "$DEST/etcd" ]; then
  log "building etcd v$ETCD_VERSION"
  mod="$work/etcd"; rm -rf "$mod"; mkdir -p "$mod"
  (cd "$mod" && go mod init envtest-etcd >/dev/null 2>&1 &&
    go get "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" >&2 &&
    go build -trimpath -ldflags=-s -o "$DEST/etcd.tmp" go.etcd.io/etcd/server/v3 >&2)
  mv "$DEST/etcd.tmp" "$DEST/etcd"
fi

# 2b. kube-apiserver: k8s.io/kubernetes points its staging modules at local folders with
# `replace`, which `go install` refuses; a module of our own that replaces each of them by the
# published module of the matching v0.x version builds it (about 8 minutes on 2 cores).
if [ ! -x "$DEST/kube-apiserver" ]; then
  log "building kube-apiserver v$K8S_VERSION"
  mod="$work/kube-apiserver"; rm -rf "$mod"; mkdir -p "$mod"
  staging_version="v0.${K8S_VERSION#*.}"
  gomod=$(cd "$mod" && go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
    sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module envtest-kube-apiserver"
    echo
    echo "go $(go env GOVERSION | sed 's/^go\([0-9]*\.[0-9]*\).*/\1/')"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    echo "replace ("
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$staging_version"'#p' "$gomod"
    echo ")"
  } > "$mod/go.mod"
  # A blank import keeps the requirement through `go mod tidy`, which also fills in go.sum.
  printf '//go:build tools\n\npackage tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' > "$mod/tools.go"
  (cd "$mod" && go mod tidy -e >&2 &&
    go build -trimpath -ldflags=-s -o "$DEST/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver >&2)
  mv "$DEST/kube-apiserver.tmp" "$DEST/kube-apiserver"
fi

have_binaries "$DEST" || { log "binaries missing in $DEST"; exit 1; }
echo "$DEST"
