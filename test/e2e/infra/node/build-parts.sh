#!/usr/bin/env bash
# Build (once) and cache the node e2e suite's parts (test/e2e/node.e2e.ts):
#
#   ${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}/node-parts-<kubelet version>/out/
#     fake-device-plugin       the device plugin (fake-device-plugin/main.go says what it serves)
#     pause, netprobe          the images' binaries, static (CGO_ENABLED=0)
#     images/pause.tar         netattach.local/pause:e2e     (entrypoint /pause)
#     images/netprobe.tar      netattach.local/netprobe:e2e  (entrypoint /netprobe)
#
# The image tars are docker archives written by mkimage/main.go (go-containerregistry's tarball
# package); `ctr -n k8s.io images import FILE` loads them. No registry, no docker daemon.
#
# Idempotent: when the output is there, runs, and was built from the same sources (a hash of
# the *.go files beside this script), nothing is rebuilt. Prints the out directory as the last
# line of stdout. Locked like the other build scripts, so concurrent callers wait.
#
#   --test   also run the plugin's Go test (a fake kubelet on a temp socket:
#            fake-device-plugin/main_test.go) in the build module; the out directory still
#            comes last on stdout. Exit 1 when it fails.
#
# One throw-away module in the cache: k8s.io/kubelet at the Kubernetes version of the node
# (v1.37.2: k8s.io/kubelet v0.37.2 and the grpc it requires), fsnotify, go-containerregistry.
#
# Environment:
#   NETATTACH_KUBELET_API_VERSION  default v0.37.2 (k8s.io/kubelet)
#   NETATTACH_E2E_CACHE            default $HOME/.cache/netattach-e2e
set -euo pipefail
{

RUN_TEST=0
for a in "$@"; do
  case "$a" in
    --test) RUN_TEST=1 ;;
    *) echo "build-parts.sh: unknown argument $a (only --test)" >&2; exit 2 ;;
  esac
done

VERSION="${NETATTACH_KUBELET_API_VERSION:-v0.37.2}"
CACHE_ROOT="${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}"
ROOT="$CACHE_ROOT/node-parts-$VERSION"
OUT="$ROOT/out"
SRC="$ROOT/src"
LOCK="$ROOT/.build.lock"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PROGRAMS="fake-device-plugin pause netprobe mkimage"

log() { echo "[node-parts] $*" >&2; }

# shellcheck source=../build-common.sh
. "$HERE/../build-common.sh"
need_go 1.26
mkdir -p "$ROOT"
lock "$LOCK"

src_hash=$( (cd "$HERE" && find $PROGRAMS -name '*.go' ! -name '*_test.go' | LC_ALL=C sort | xargs sha256sum; echo "$VERSION") | sha256sum | cut -c1-16)

# The plugin without --resource says so and exits 2; pause -v names itself; netprobe --once
# prints "netprobe: ready"; the tars hold a manifest.
works() {
  local out
  [ "$(cat "$OUT/.src" 2>/dev/null)" = "$src_hash" ] || return 1
  out=$("$OUT/fake-device-plugin" 2>&1 </dev/null || true)
  [[ $out == *"--resource NAME=COUNT is required"* ]] || return 1
  [[ $("$OUT/pause" -v 2>&1) == "pause (netattach e2e)" ]] || return 1
  [[ $(env -i "$OUT/netprobe" --once 2>&1) == *"netprobe: ready"* ]] || return 1
  tar -tf "$OUT/images/pause.tar" 2>/dev/null | grep -qx manifest.json || return 1
  tar -tf "$OUT/images/netprobe.tar" 2>/dev/null | grep -qx manifest.json
}

build() {
  go_env
  local start; start=$(date +%s)
  rm -rf "$SRC" && mkdir -p "$SRC"
  for p in $PROGRAMS; do cp -r "$HERE/$p" "$SRC/$p"; done
  cat > "$SRC/go.mod" <<MOD
module netattach.local/node-parts

go 1.26.0
MOD
  log "fetching k8s.io/kubelet@$VERSION, fsnotify, go-containerregistry"
  (cd "$SRC" && go get "k8s.io/kubelet@$VERSION" github.com/fsnotify/fsnotify@v1.9.0 \
      github.com/google/go-containerregistry@v0.22.1) >&2
  rm -rf "$ROOT/out.tmp" && mkdir -p "$ROOT/out.tmp/images"
  log "building $PROGRAMS"
  # shellcheck disable=SC2086
  (cd "$SRC" && go build -trimpath -ldflags="-s -w" -o "$ROOT/out.tmp/" $(for p in $PROGRAMS; do echo "./$p"; done)) >&2
  "$ROOT/out.tmp/mkimage" --name netattach.local/pause:e2e --binary "$ROOT/out.tmp/pause" \
    --entrypoint /pause --out "$ROOT/out.tmp/images/pause.tar"
  "$ROOT/out.tmp/mkimage" --name netattach.local/netprobe:e2e --binary "$ROOT/out.tmp/netprobe" \
    --entrypoint /netprobe --out "$ROOT/out.tmp/images/netprobe.tar"
  echo "$src_hash" > "$ROOT/out.tmp/.src"
  rm -rf "$OUT" && mv "$ROOT/out.tmp" "$OUT"
  works || { log "the built parts do not work"; exit 1; }
  log "done in $(( $(date +%s) - start ))s: $OUT ($(du -sh "$OUT" | cut -f1))"
}

if works; then
  log "cached: $OUT"
else
  build
fi

if [ "$RUN_TEST" = 1 ]; then
  go_env
  # The test sources are not part of the hash: copy them in each time.
  cp "$HERE"/fake-device-plugin/*_test.go "$SRC/fake-device-plugin/"
  log "go test ./fake-device-plugin (a fake kubelet on a temp socket)"
  (cd "$SRC" && go test -count=1 ./fake-device-plugin/) >&2 || { log "go test failed"; exit 1; }
fi
echo "$OUT"
exit 0
}
