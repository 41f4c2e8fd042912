#!/usr/bin/env bash
# Provides the envtest binaries (kube-apiserver, etcd) and prints the folder that holds them,
# for KUBEBUILDER_ASSETS.
#
# It first tries the normal way (setup-envtest, which downloads release binaries). Where that
# download is not reachable (offline CI, air-gapped labs) it builds both binaries from their Go
# modules, which only needs the Go module proxy. Either way the binaries go once into a per-user
# cache outside the clone (hack/toolcache.sh), which every later run and every other clone
# reuses. Progress goes to stderr; stdout carries only the folder.
set -euo pipefail

K8S_VERSION="${ENVTEST_K8S_VERSION:-1.36.3}"
ETCD_VERSION="${ENVTEST_ETCD_VERSION:-3.6.16}"
SETUP_ENVTEST_VERSION="${SETUP_ENVTEST_VERSION:-release-0.24}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLCACHE_LOG_PREFIX=envtest
# shellcheck source=hack/toolcache.sh
source "$ROOT/hack/toolcache.sh"
export GOTOOLCHAIN=local

# ENVTEST_BIN_DIR (a folder holding one subfolder per version) overrides the cache.
if [ -n "${ENVTEST_BIN_DIR:-}" ]; then
  DEST="$ENVTEST_BIN_DIR/$K8S_VERSION"
else
  DEST="$TOOLCACHE_DIR/k8s/$K8S_VERSION-$TOOLCACHE_PLATFORM"
fi

log() { echo "envtest: $*" >&2; }

have_binaries() { [ -x "$1/kube-apiserver" ] && [ -x "$1/etcd" ]; }

# Clones from before the per-user cache kept the binaries in their own bin/k8s.
legacy=""
[ -n "${ENVTEST_BIN_DIR:-}" ] || legacy="$ROOT/bin/k8s/$K8S_VERSION"
toolcache_start "$DEST" have_binaries "$DEST" "$legacy"
tmp="$toolcache_tmp"
started=$SECONDS
finish() { toolcache_finish "$DEST" have_binaries "$DEST"; }

# 1. The normal download. A short timeout: offline, it would otherwise hang on DNS or TCP.
if [ -z "${ENVTEST_SKIP_DOWNLOAD:-}" ]; then
  log "trying setup-envtest $SETUP_ENVTEST_VERSION for Kubernetes $K8S_VERSION (at most 2 minutes)"
  if dir=$(timeout 120 go run "sigs.k8s.io/controller-runtime/tools/setup-envtest@$SETUP_ENVTEST_VERSION" \
      use "$K8S_VERSION" --bin-dir "$tmp/download" -p path 2>/dev/null) && have_binaries "$dir"; then
    cp "$dir/kube-apiserver" "$dir/etcd" "$tmp/"
    chmod -R u+w "$tmp/download" && rm -rf "$tmp/download"
    log "downloaded in $(toolcache_elapsed "$started") into $DEST"
    finish
  fi
  log "that download is not reachable from here (needs the internet), so building from the Go module proxy instead"
fi

# 2. Build both from their Go modules. The go.mod files below name only what is built and
# `go build -mod=mod` resolves the rest: `go mod tidy` would also fetch the dependencies of
# every dependency's tests, minutes of downloads on a bare machine for nothing used here.
log "building kube-apiserver v$K8S_VERSION and etcd v$ETCD_VERSION from their Go modules:"
log "a one-time build (about 6 minutes on 2 idle cores, longer on a busy machine) into $DEST;"
log "later runs, and other clones of this user, reuse it"
build_log="$tmp.log"

# 2a. etcd: an ordinary Go module (about a minute).
# shellcheck disable=SC2317 # called through toolcache_run
build_etcd() {
  local mod="$tmp/src-etcd"
  mkdir -p "$mod"
  printf 'module envtest-etcd\n\ngo %s\n\nrequire go.etcd.io/etcd/server/v3 v%s\n' \
    "$(toolcache_goversion)" "$ETCD_VERSION" >"$mod/go.mod"
  (cd "$mod" && go build -mod=mod -trimpath -ldflags=-s -o "$tmp/etcd" go.etcd.io/etcd/server/v3)
}
step=$SECONDS
log "building etcd v$ETCD_VERSION (about 1 minute)"
toolcache_run "$build_log" etcd build_etcd
log "etcd built in $(toolcache_elapsed "$step")"

# 2b. kube-apiserver: k8s.io/kubernetes points its staging modules at local folders with
# `replace`, which `go install` refuses; a module of our own that replaces each of them by the
# published module of the matching v0.x version builds it (about 5 minutes on 2 idle cores).
# shellcheck disable=SC2317 # called through toolcache_run
build_kube_apiserver() {
  local mod="$tmp/src-kube-apiserver" staging_version="v0.${K8S_VERSION#*.}" gomod
  mkdir -p "$mod"
  gomod=$(cd "$mod" && go mod download -json "k8s.io/kubernetes@v$K8S_VERSION" |
    sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  {
    echo "module envtest-kube-apiserver"
    echo
    echo "go $(toolcache_goversion)"
    echo
    echo "require k8s.io/kubernetes v$K8S_VERSION"
    echo
    echo "replace ("
    sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\t\1 => \1 '"$staging_version"'#p' "$gomod"
    echo ")"
  } >"$mod/go.mod"
  (cd "$mod" && go build -mod=mod -trimpath -ldflags=-s -o "$tmp/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver)
}
step=$SECONDS
log "building kube-apiserver v$K8S_VERSION (about 5 minutes)"
toolcache_run "$build_log" kube-apiserver build_kube_apiserver
log "kube-apiserver built in $(toolcache_elapsed "$step")"

rm -rf "$tmp/src-etcd" "$tmp/src-kube-apiserver" "$build_log"
log "done in $(toolcache_elapsed "$started"); cached in $DEST"
finish
