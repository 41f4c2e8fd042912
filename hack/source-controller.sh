#!/usr/bin/env bash
# Provides Flux's source-controller binary (and its CRDs) for the end-to-end tests and the local
# demo, and prints the binary's path.
#
# Flux's release binaries and `flux install` need the internet; the Go module proxy is enough to
# build source-controller from its module, once, into a git-ignored cache. Nothing that is already
# there is rebuilt. Progress goes to stderr; stdout carries only the path.
set -euo pipefail

VERSION="${SOURCE_CONTROLLER_VERSION:-v1.9.6}"
# The proxy does not serve fluxcd/pkg/artifact v0.18.2/v0.18.3 (403 "not available"); v0.18.1 is
# served and is API-compatible with what source-controller v1.9.6 uses.
ARTIFACT_VERSION="${FLUX_ARTIFACT_VERSION:-v0.18.1}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DEST="${SOURCE_CONTROLLER_DIR:-$ROOT/bin/flux/source-controller-$VERSION}"

log() { echo "source-controller: $*" >&2; }

if [ -x "$DEST/source-controller" ] && [ -d "$DEST/crd" ]; then
  echo "$DEST/source-controller"
  exit 0
fi

export GOTOOLCHAIN=local GOFLAGS=-mod=mod
mod="$DEST/.build"
rm -rf "$mod"; mkdir -p "$mod"
log "building source-controller $VERSION (once, about 7 minutes on 2 cores)"
gomod=$(cd "$mod" && go mod download -json "github.com/fluxcd/source-controller@$VERSION" |
  sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
srcdir=$(cd "$mod" && go mod download -json "github.com/fluxcd/source-controller@$VERSION" |
  sed -n 's/.*"Dir": "\(.*\)".*/\1/p')
{
  echo "module envtest-source-controller"
  echo
  echo "go $(go env GOVERSION | sed 's/^go\([0-9]*\.[0-9]*\).*/\1/')"
  echo
  echo "require ("
  echo "	github.com/fluxcd/source-controller $VERSION"
  echo "	github.com/fluxcd/source-controller/api $VERSION"
  echo ")"
  echo
  # source-controller's own replace of go-digest, copied because replaces do not propagate.
  grep -E '^replace github.com/opencontainers/go-digest' "$gomod" || true
  echo "replace github.com/fluxcd/pkg/artifact => github.com/fluxcd/pkg/artifact $ARTIFACT_VERSION"
} > "$mod/go.mod"
printf '//go:build tools\n\npackage tools\n\nimport _ "github.com/fluxcd/source-controller"\n' > "$mod/tools.go"
# -e: some of source-controller's test-only modules are not served by the proxy.
(cd "$mod" && go mod tidy -e >&2 &&
  go build -trimpath -ldflags=-s -o "$DEST/source-controller.tmp" github.com/fluxcd/source-controller >&2)
mkdir -p "$DEST/crd"
cp "$srcdir"/config/crd/bases/*.yaml "$DEST/crd/"
chmod u+w "$DEST"/crd/*.yaml
mv "$DEST/source-controller.tmp" "$DEST/source-controller"
echo "$DEST/source-controller"
