#!/usr/bin/env bash
# Provides Flux's source-controller binary (and its CRDs, in crd/ beside it) for the end-to-end
# tests and the local demo, and prints the binary's path.
#
# Flux's release binaries and `flux install` need the internet; the Go module proxy is enough to
# build source-controller from its module, once, into a per-user cache outside the clone
# (hack/toolcache.sh), which every later run and every other clone reuses. Progress goes to
# stderr; stdout carries only the path.
set -euo pipefail

VERSION="${SOURCE_CONTROLLER_VERSION:-v1.9.6}"
# The proxy does not serve fluxcd/pkg/artifact v0.18.2/v0.18.3 (403 "not available"); v0.18.1 is
# served and is API-compatible with what source-controller v1.9.6 uses.
ARTIFACT_VERSION="${FLUX_ARTIFACT_VERSION:-v0.18.1}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLCACHE_LOG_PREFIX=source-controller
# shellcheck source=hack/toolcache.sh
source "$ROOT/hack/toolcache.sh"
export GOTOOLCHAIN=local
# SOURCE_CONTROLLER_DIR (the folder of the binary and crd/) overrides the cache.
DEST="${SOURCE_CONTROLLER_DIR:-$TOOLCACHE_DIR/flux/source-controller-$VERSION-$TOOLCACHE_PLATFORM}"

log() { echo "source-controller: $*" >&2; }

# shellcheck disable=SC2317 # called through toolcache_start and toolcache_finish
complete() { [ -x "$1/source-controller" ] && [ -d "$1/crd" ]; }

# Clones from before the per-user cache kept it in their own bin/flux.
legacy=""
[ -n "${SOURCE_CONTROLLER_DIR:-}" ] || legacy="$ROOT/bin/flux/source-controller-$VERSION"
toolcache_start "$DEST" complete "$DEST/source-controller" "$legacy"
tmp="$toolcache_tmp"
started=$SECONDS
finish() { toolcache_finish "$DEST" complete "$DEST/source-controller"; }

log "building source-controller $VERSION from its Go module: a one-time build (about 7 minutes"
log "on 2 idle cores, longer on a busy machine) into $DEST;"
log "later runs, and other clones of this user, reuse it"
build_log="$tmp.log"

# A module of our own that requires source-controller. Only its go.mod is written and
# `go build -mod=mod` resolves the rest: `go mod tidy` would also fetch the dependencies of
# source-controller's tests, some of which the proxy refuses (github.com/fluxcd/pkg/helmtestserver
# v0.40.2: "403 Forbidden ... This module version is not available"), a harmless but alarming
# line and minutes of downloads on a bare machine for nothing used here.
# shellcheck disable=SC2317 # called through toolcache_run
build() {
  local mod="$tmp/src" info gomod srcdir
  mkdir -p "$mod"
  info=$(cd "$mod" && go mod download -json "github.com/fluxcd/source-controller@$VERSION")
  gomod=$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' <<<"$info")
  srcdir=$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info")
  {
    echo "module envtest-source-controller"
    echo
    echo "go $(toolcache_goversion)"
    echo
    echo "require ("
    echo "	github.com/fluxcd/source-controller $VERSION"
    echo "	github.com/fluxcd/source-controller/api $VERSION"
    echo ")"
    echo
    # source-controller's own replace of go-digest, copied because replaces do not propagate.
    grep -E '^replace github.com/opencontainers/go-digest' "$gomod" || true
    echo "replace github.com/fluxcd/pkg/artifact => github.com/fluxcd/pkg/artifact $ARTIFACT_VERSION"
  } >"$mod/go.mod"
  (cd "$mod" && go build -mod=mod -trimpath -ldflags=-s -o "$tmp/source-controller" github.com/fluxcd/source-controller)
  mkdir -p "$tmp/crd"
  cp "$srcdir"/config/crd/bases/*.yaml "$tmp/crd/"
  # The module cache is read-only; the copies need not be.
  chmod u+w "$tmp"/crd/*.yaml
}
toolcache_run "$build_log" source-controller build

rm -rf "$tmp/src" "$build_log"
log "built in $(toolcache_elapsed "$started"); cached in $DEST"
finish
