#!/usr/bin/env bash
# Build (once) and cache the runtime oracle of test/e2e/cni-oracle.e2e.ts: the reference CNI
# plugins (containernetworking/plugins) and cni-invoke, which calls one of them the way Multus
# v4.3.0 calls a delegate (test/e2e/infra/cni-invoke/main.go says which Multus function each
# step follows):
#
#   ${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}/cni-<version>/bin/{bridge,macvlan,...,cni-invoke}
#
# Idempotent: binaries that are already there (and run) are not rebuilt. Prints the bin directory
# as the last line of stdout.
#
# Two throw-away modules, because the versions differ: the plugins at their own go.mod (v1.10.0
# needs libcni v1.3.1 and Go 1.26.8), the invoker at Multus v4.3.0's pins (go.mod:
# containernetworking/cni v1.3.0, vishvananda/netlink v1.3.1, netns v0.0.5). Built as released.
#
# Environment:
#   NETATTACH_CNI_PLUGINS_VERSION  default v1.10.0
#   NETATTACH_E2E_CACHE            default $HOME/.cache/netattach-e2e
set -euo pipefail
{

VERSION="${NETATTACH_CNI_PLUGINS_VERSION:-v1.10.0}"
CACHE_ROOT="${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}"
DIR="$CACHE_ROOT/cni-$VERSION"
BIN="$DIR/bin"
LOCK="$DIR/.build.lock"
PLUGINS_MOD=github.com/containernetworking/plugins
PLUGINS="main/bridge main/macvlan main/ipvlan main/ptp main/host-device main/loopback main/vlan main/dummy meta/tuning ipam/static ipam/host-local"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

log() { echo "[cni-build] $*" >&2; }

# shellcheck source=build-common.sh
. "$HERE/build-common.sh"
need_go 1.26
mkdir -p "$BIN"
lock "$LOCK"

# A plugin run without CNI_COMMAND prints "CNI <name> plugin <version>"; the invoker, given no request,
# refuses it as a bad request (exit 2). The invoker's source is hashed: an edited main.go rebuilds.
src_hash=$(sha256sum "$HERE/cni-invoke/main.go" | cut -c1-16)
works() {
  local p out
  for p in $PLUGINS; do
    [ -x "$BIN/${p#*/}" ] || return 1
    out=$(env -u CNI_COMMAND "$BIN/${p#*/}" </dev/null 2>&1 || true)
    [[ $out == *"plugin $VERSION"* ]] || return 1
  done
  [ -x "$BIN/cni-invoke" ] && [ "$(cat "$BIN/.cni-invoke.src" 2>/dev/null)" = "$src_hash" ] || return 1
  out=$("$BIN/cni-invoke" </dev/null 2>&1 || true)
  [[ $out == *"bad request"* ]]
}

if works; then
  log "cached: $BIN"
  echo "$BIN"
  exit 0
fi

go_env
start=$(date +%s)

plugins_dir="$DIR/plugins-tools"
mkdir -p "$plugins_dir"
{
  echo "module netattach.local/e2e-tools-cni"
  echo
  echo "go 1.26"
  echo
  echo "require $PLUGINS_MOD $VERSION"
} > "$plugins_dir/go.mod"
{
  echo "//go:build tools"
  echo
  echo "package tools"
  echo
  for p in $PLUGINS; do echo "import _ \"$PLUGINS_MOD/plugins/$p\""; done
} > "$plugins_dir/tools.go"
rm -f "$plugins_dir/go.sum"
log "fetching $PLUGINS_MOD@$VERSION"
(cd "$plugins_dir" && go get "$PLUGINS_MOD@$VERSION") >&2
# The plugins print their version from a variable set at link time (pkg/utils/buildversion), as
# the project's own build script does.
ldflags="-s -w -X $PLUGINS_MOD/pkg/utils/buildversion.BuildVersion=$VERSION"
# One go build for all of them: shared packages compile once. Into a scratch directory first, so
# a half-finished build never looks cached.
log "building $(echo "$PLUGINS" | wc -w) plugins: $PLUGINS"
rm -rf "$DIR/bin.tmp" && mkdir -p "$DIR/bin.tmp"
pkgs=""; for p in $PLUGINS; do pkgs="$pkgs $PLUGINS_MOD/plugins/$p"; done
# shellcheck disable=SC2086
(cd "$plugins_dir" && go build -trimpath -ldflags="$ldflags" -o "$DIR/bin.tmp/" $pkgs) >&2
mv "$DIR"/bin.tmp/* "$BIN/" && rmdir "$DIR/bin.tmp"

invoke_dir="$DIR/invoke-tools"
mkdir -p "$invoke_dir"
cp "$HERE/cni-invoke/main.go" "$invoke_dir/main.go"
cat > "$invoke_dir/go.mod" <<MOD
module netattach.local/cni-invoke

go 1.25

require (
	github.com/containernetworking/cni v1.3.0
	github.com/vishvananda/netlink v1.3.1
	github.com/vishvananda/netns v0.0.5
)
MOD
rm -f "$invoke_dir/go.sum"
log "building cni-invoke (libcni v1.3.0, as Multus v4.3.0)"
(cd "$invoke_dir" && go get github.com/containernetworking/cni@v1.3.0 && go build -trimpath -ldflags="-s -w" -o "$BIN/cni-invoke.tmp" .) >&2
mv "$BIN/cni-invoke.tmp" "$BIN/cni-invoke"
echo "$src_hash" > "$BIN/.cni-invoke.src"

works || { log "the built binaries do not run"; exit 1; }
log "done in $(( $(date +%s) - start ))s: $BIN ($(du -sh "$BIN" | cut -f1))"
echo "$BIN"
exit 0
}
