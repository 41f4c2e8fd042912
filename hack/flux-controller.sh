#!/usr/bin/env bash
# Usage: hack/flux-controller.sh NAME, NAME one of source-controller, notification-controller,
# kustomize-controller. Provides that Flux controller's binary (and its CRDs, in crd/ beside it)
# for the end-to-end tests and the local demo, and prints the binary's path.
#
# Flux's release binaries and `flux install` need the internet; the Go module proxy is enough to
# build a controller from its module, once, into a per-user cache outside the clone
# (hack/toolcache.sh), which every later run and every other clone reuses. Progress goes to
# stderr; stdout carries only the path.
set -euo pipefail

NAME="${1:-}"
# The one place the versions are pinned. Each is a release whose go.mod builds with the Go
# toolchain here and whose module the proxy serves (it refuses some releases with 403 "not
# available", notification-controller v1.9.1-v1.9.6 among them), from the same Flux minor so that
# their APIs agree. REPLACES lists a controller's `replace` lines beyond its own (which are
# copied from its go.mod, as replaces do not propagate to a module that requires it).
case "$NAME" in
source-controller)
  VERSION=v1.9.6
  # The proxy does not serve fluxcd/pkg/artifact v0.18.2/v0.18.3 (403 "not available"); v0.18.1
  # is served and is API-compatible with what source-controller v1.9.6 uses.
  REPLACES=("github.com/fluxcd/pkg/artifact => github.com/fluxcd/pkg/artifact v0.18.1")
  ;;
notification-controller)
  VERSION=v1.6.0
  REPLACES=()
  ;;
kustomize-controller)
  VERSION=v1.9.6
  REPLACES=()
  ;;
*)
  echo "usage: $0 source-controller|notification-controller|kustomize-controller" >&2
  exit 2
  ;;
esac
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLCACHE_LOG_PREFIX=$NAME
# shellcheck source=hack/toolcache.sh
source "$ROOT/hack/toolcache.sh"
export GOTOOLCHAIN=local
MODULE="github.com/fluxcd/$NAME"
DEST="$TOOLCACHE_DIR/flux/$NAME-$VERSION-$TOOLCACHE_PLATFORM"

log() { echo "$NAME: $*" >&2; }

# shellcheck disable=SC2317 # called through toolcache_start and toolcache_finish
complete() { [ -x "$1/$NAME" ] && [ -d "$1/crd" ]; }

# Clones from before the per-user cache kept source-controller in their own bin/flux.
toolcache_start "$DEST" complete "$DEST/$NAME" "$ROOT/bin/flux/$NAME-$VERSION"
tmp="$toolcache_tmp"
started=$SECONDS

log "building $NAME $VERSION from its Go module: a one-time build (several minutes on 2 idle"
log "cores, longer on a busy machine) into $DEST;"
log "later runs, and other clones of this user, reuse it"
build_log="$tmp.log"

# A module of our own that requires the controller. Only its go.mod is written and
# `go build -mod=mod` resolves the rest: `go mod tidy` would also fetch the dependencies of the
# controller's tests, some of which the proxy refuses (github.com/fluxcd/pkg/helmtestserver
# v0.40.2: "403 Forbidden ... This module version is not available"), a harmless but alarming
# line and minutes of downloads on a bare machine for nothing used here.
# shellcheck disable=SC2317 # called through toolcache_run
build() {
  local mod="$tmp/src" info gomod srcdir replace
  mkdir -p "$mod"
  info=$(cd "$mod" && go mod download -json "$MODULE@$VERSION")
  gomod=$(sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' <<<"$info")
  srcdir=$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info")
  {
    echo "module envtest-$NAME"
    echo
    echo "go $(toolcache_goversion)"
    echo
    echo "require ("
    echo "	$MODULE $VERSION"
    echo "	$MODULE/api $VERSION"
    echo ")"
    echo
    # The controller's own replaces, single lines and blocks, but not those by a local path (its
    # api/), which mean nothing outside its repository.
    awk '/^replace \(/ { block = 1; next }
      block && /^\)/ { block = 0; next }
      block && NF && $1 !~ /^\/\// { print "replace " $0; next }
      /^replace / { print }' "$gomod" | grep -vE '=>[[:space:]]*[./]' || true
    for replace in ${REPLACES[@]+"${REPLACES[@]}"}; do
      echo "replace $replace"
    done
  } >"$mod/go.mod"
  (cd "$mod" && go build -mod=mod -trimpath -ldflags=-s -o "$tmp/$NAME" "$MODULE")
  mkdir -p "$tmp/crd"
  cp "$srcdir"/config/crd/bases/*.yaml "$tmp/crd/"
  # The module cache is read-only; the copies need not be.
  chmod u+w "$tmp"/crd/*.yaml
}
toolcache_run "$build_log" "$NAME" build

rm -rf "$tmp/src" "$build_log"
log "built in $(toolcache_elapsed "$started"); cached in $DEST"
toolcache_finish "$DEST" complete "$DEST/$NAME"
