#!/usr/bin/env bash
# Build (once) and cache krew, for the plugin's install test (test/e2e/kubectl-plugin.e2e.ts:
# `kubectl krew install --manifest --archive` of what `npm run build:plugin` writes):
#
#   ${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}/krew-<version>/bin/krew
#
# Idempotent: a binary that is already there (and reports its version) is not rebuilt. Prints the
# binary's path as the last line of stdout. sigs.k8s.io/krew's go.mod has no replace directives,
# so `go install` builds it as released, with the version ldflags its build script sets.
#
# Environment:
#   NETATTACH_KREW_VERSION  default v0.4.3
#   NETATTACH_E2E_CACHE     default $HOME/.cache/netattach-e2e
set -euo pipefail
{

KREW_VERSION="${NETATTACH_KREW_VERSION:-v0.4.3}"
CACHE_ROOT="${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}"
DIR="$CACHE_ROOT/krew-$KREW_VERSION"
BIN="$DIR/bin"
LOCK="$DIR/.build.lock"
MODULE="sigs.k8s.io/krew"

log() { echo "[krew-build] $*" >&2; }

# shellcheck source=build-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
need_go 1.26
mkdir -p "$BIN"
lock "$LOCK"

works() {
  [ -x "$1" ] || return 1
  local out; out=$(KREW_ROOT="$DIR/.probe" "$1" version 2>/dev/null | awk '$1 == "GitTag" { print $2 }' || true)
  [ "$out" = "$KREW_VERSION" ]
}

if works "$BIN/krew"; then
  log "cached: $BIN/krew"
  echo "$BIN/krew"
  exit 0
fi

go_install_released "$BIN" krew "$MODULE/cmd/krew@$KREW_VERSION" "-s -w -X $MODULE/internal/version.gitTag=$KREW_VERSION"
echo "$BIN/krew"
exit 0
}
