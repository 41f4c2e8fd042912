#!/usr/bin/env bash
# Usage: hack/golangci-lint.sh. Provides golangci-lint for `make lint` and prints its path.
#
# Its release binaries come from GitHub, which may not be reachable; the Go module proxy is
# enough to build it from its module, once, into the per-user cache outside the clone
# (hack/toolcache.sh), which every later run and every other clone reuses. Progress goes to
# stderr; stdout carries only the path.
set -euo pipefail

# The one place the version is pinned: v2 reads .golangci.yml's `version: "2"`.
VERSION=v2.15.0
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLCACHE_LOG_PREFIX=golangci-lint
# shellcheck source=hack/toolcache.sh
source "$ROOT/hack/toolcache.sh"
export GOTOOLCHAIN=local
DEST="$TOOLCACHE_DIR/golangci-lint/$VERSION-$TOOLCACHE_PLATFORM"

log() { echo "golangci-lint: $*" >&2; }

# shellcheck disable=SC2317 # called through toolcache_start and toolcache_finish
complete() { [ -x "$1/golangci-lint" ]; }

toolcache_start "$DEST" complete "$DEST/golangci-lint"
tmp="$toolcache_tmp"
started=$SECONDS

log "building golangci-lint $VERSION from its Go module: a one-time build (several minutes on"
log "2 idle cores, half an hour on a busy machine) into $DEST;"
log "later runs, and other clones of this user, reuse it"
build_log="$tmp.log"

# shellcheck disable=SC2317 # called through toolcache_run
build() {
  GOBIN="$tmp" GOFLAGS=-trimpath go install -ldflags=-s \
    "github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$VERSION"
}
toolcache_run "$build_log" "golangci-lint $VERSION" build

rm -f "$build_log"
log "built in $(toolcache_elapsed "$started"); cached in $DEST"
toolcache_finish "$DEST" complete "$DEST/golangci-lint"
