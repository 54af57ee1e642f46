#!/usr/bin/env bash
# Build (once) and cache helm, for the chart tests (test/e2e/helm.e2e.ts: lint, template against
# `kubectl kustomize`, install and upgrade against the e2e apiserver):
#
#   ${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}/helm-<version>/bin/helm
#
# Idempotent: a binary that is already there (and reports its version) is not rebuilt. Prints the
# binary's path as the last line of stdout.
#
# Helm 4: Helm 3's support ended in November 2026 (security fixes last). helm.sh/helm/v4's go.mod
# has no replace directives, so `go install helm.sh/helm/v4/cmd/helm@VERSION` builds it as
# released, with the version ldflag its Makefile sets (internal/version.version).
#
# Environment:
#   NETATTACH_HELM_VERSION  default v4.3.1
#   NETATTACH_E2E_CACHE     default $HOME/.cache/netattach-e2e
set -euo pipefail
{

HELM_VERSION="${NETATTACH_HELM_VERSION:-v4.3.1}"
CACHE_ROOT="${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}"
DIR="$CACHE_ROOT/helm-$HELM_VERSION"
BIN="$DIR/bin"
LOCK="$DIR/.build.lock"
MODULE="helm.sh/helm/${HELM_VERSION%%.*}"

log() { echo "[helm-build] $*" >&2; }

# shellcheck source=build-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
need_go 1.26
mkdir -p "$BIN"
lock "$LOCK"

works() {
  [ -x "$1" ] || return 1
  local out; out=$("$1" version --template '{{.Version}}' 2>/dev/null || true)
  [ "$out" = "$HELM_VERSION" ]
}

if works "$BIN/helm"; then
  log "cached: $BIN/helm"
  echo "$BIN/helm"
  exit 0
fi

go_install_released "$BIN" helm "$MODULE/cmd/helm@$HELM_VERSION" \
  "-s -w -X $MODULE/internal/version.version=$HELM_VERSION -X $MODULE/internal/version.gitTreeState=clean"
echo "$BIN/helm"
exit 0
}
