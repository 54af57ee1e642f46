#!/usr/bin/env bash
# Build (once) and cache network-resources-injector, the peer the NRI oracle test compares
# netattach with (test/e2e/nri-oracle.e2e.ts):
#
#   ${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}/nri-<version>/bin/webhook
#
# Idempotent: a binary that is already there (and runs) is not rebuilt. Prints the binary's path
# as the last line of stdout.
#
# `go install github.com/k8snetworkplumbingwg/network-resources-injector/cmd/webhook@v1.9.0` is
# refused (the proxy does not list the module's versions), but the version itself is served, so
# a throw-away tools module requires it, as build.sh does for kube-apiserver.
#
# One change at build time, in a copy of client-go (the module cache stays untouched):
# rest.InClusterConfig reads its token and CA from var/run/secrets/kubernetes.io/serviceaccount/
# RELATIVE to the working directory instead of the absolute path a kubelet mounts. NRI only knows in-cluster credentials, and a test must not
# write into /var/run; the harness starts NRI in a directory that holds that relative path.
# NRI's own code is built as released.
#
# Environment:
#   NETATTACH_NRI_VERSION  default v1.9.0
#   NETATTACH_E2E_CACHE    default $HOME/.cache/netattach-e2e
set -euo pipefail
{

NRI_VERSION="${NETATTACH_NRI_VERSION:-v1.9.0}"
CACHE_ROOT="${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}"
DIR="$CACHE_ROOT/nri-$NRI_VERSION"
BIN="$DIR/bin"
LOCK="$DIR/.build.lock"
NRI=github.com/k8snetworkplumbingwg/network-resources-injector

log() { echo "[nri-build] $*" >&2; }

# shellcheck source=build-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
need_go 1.25
mkdir -p "$BIN"
lock "$LOCK"

# The webhook has no --version: given an invalid port, it parses every flag, then exits at once
# naming the port (before it needs certificates or an API server).
works() {
  [ -x "$1" ] || return 1
  local out; out=$("$1" -logtostderr -port=1 2>&1 || true)
  [[ $out == *"invalid port number"* ]]
}

if works "$BIN/webhook"; then
  log "cached: $BIN/webhook"
  echo "$BIN/webhook"
  exit 0
fi

go_env
start=$(date +%s)
mod="$DIR/tools"
mkdir -p "$mod"
cat > "$mod/go.mod" <<EOF
module netattach.local/e2e-tools-nri

go 1.25

require $NRI $NRI_VERSION
EOF
cat > "$mod/tools.go" <<EOF
//go:build tools

package tools

import _ "$NRI/cmd/webhook"
EOF
rm -f "$mod/go.sum"
log "fetching $NRI@$NRI_VERSION"
(cd "$mod" && go get "$NRI/cmd/webhook@$NRI_VERSION") >&2

# client-go as resolved for NRI, copied (21 MB) and relocated; Go refuses overlays of files in the
# module cache, so a local `replace` points the build at the copy.
clientgo=$(cd "$mod" && go list -m -f '{{.Dir}}' k8s.io/client-go)
rm -rf "$mod/client-go"
cp -r "$clientgo" "$mod/client-go"
chmod -R u+w "$mod/client-go"
src="$mod/client-go/rest/config.go"
sed -i.orig 's#"/var/run/secrets/kubernetes.io/serviceaccount/#"var/run/secrets/kubernetes.io/serviceaccount/#' "$src"
changed=$(diff "$src.orig" "$src" | grep -c '^>' || true)
rm -f "$src.orig"
[ "$changed" = 2 ] || { log "expected to relocate 2 paths (token, ca.crt) in client-go's rest/config.go, changed $changed"; exit 1; }
(cd "$mod" && go mod edit -replace k8s.io/client-go=./client-go)

log "building $NRI/cmd/webhook $NRI_VERSION"
(cd "$mod" && go build -trimpath -ldflags="-s -w" -o "$BIN/webhook.tmp" "$NRI/cmd/webhook") >&2
mv "$BIN/webhook.tmp" "$BIN/webhook"
works "$BIN/webhook" || { log "the built webhook does not run"; exit 1; }
log "done in $(( $(date +%s) - start ))s: $BIN/webhook ($(du -sh "$BIN/webhook" | cut -f1))"
echo "$BIN/webhook"
exit 0
}
