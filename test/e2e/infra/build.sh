#!/usr/bin/env bash
# Build (once) and cache kube-apiserver, kubectl and etcd for the e2e suite.
#
#   ${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}/<k8s-version>/bin/{kube-apiserver,kubectl,etcd}
#
# Idempotent: a binary that is already there (and runs) is not rebuilt.
# Prints the bin directory as the last line of stdout.
#
# kube-apiserver / kubectl: `go install k8s.io/kubernetes/...@vX` is refused
# (k8s.io/kubernetes' go.mod has replace directives), so we build from a
# throw-away tools module that requires k8s.io/kubernetes vX.Y.Z and replaces
# every staging module k8s.io/<name> (required as v0.0.0 upstream) with v0.Y.Z.
# etcd: built the same way from go.etcd.io/etcd/server/v3 (its main package);
# if that fails, Debian's etcd-server package is installed and its binary linked.
#
# Environment:
#   NETATTACH_K8S_VERSION   default v1.37.2 (every suite's: one build on a cold machine)
#   NETATTACH_ETCD_VERSION  default v3.6.16
#   NETATTACH_E2E_CACHE     default $HOME/.cache/netattach-e2e
#   NETATTACH_E2E_ETCD=apt  use Debian's etcd-server (3.4) instead of building etcd
#   NETATTACH_E2E_NO_APT=1  never fall back to apt for etcd
#   NETATTACH_E2E_SCHEDULING=1  also build kube-scheduler and kube-controller-manager
#                           (the DRA suite schedules pods and turns templates into claims)
#   NETATTACH_E2E_NODE=1    also build the kubelet (the node suite runs pods; build-node.sh sets it,
#                           with NETATTACH_E2E_SCHEDULING=1, on the DRA suite's version)
set -euo pipefail
# The whole script is one block, parsed before it runs: editing this file
# while a build is going does not break that build.
{

K8S_VERSION="${NETATTACH_K8S_VERSION:-v1.37.2}"
ETCD_VERSION="${NETATTACH_ETCD_VERSION:-v3.6.16}"
CACHE_ROOT="${NETATTACH_E2E_CACHE:-$HOME/.cache/netattach-e2e}"
DIR="$CACHE_ROOT/$K8S_VERSION"
BIN="$DIR/bin"
LOCK="$DIR/.build.lock"

log() { echo "[e2e-build] $*" >&2; }

# shellcheck source=build-common.sh
. "$(dirname "${BASH_SOURCE[0]}")/build-common.sh"
need_go 1.24
mkdir -p "$BIN"

works() { [ -x "$1" ] && "$1" "${@:2}" >/dev/null 2>&1; }

# kube-apiserver and kubectl always; the scheduling components only when asked for.
SERVERS="kube-apiserver"
[ "${NETATTACH_E2E_SCHEDULING:-}" = 1 ] && SERVERS="$SERVERS kube-scheduler kube-controller-manager"
[ "${NETATTACH_E2E_NODE:-}" = 1 ] && SERVERS="$SERVERS kubelet"
servers_work() { local b; for b in $SERVERS; do works "$BIN/$b" --version || return 1; done; }
cached() { servers_work && works "$BIN/kubectl" version --client && works "$BIN/etcd" --version; }

answer_if_cached() { cached || return 0; log "cached: $BIN"; echo "$BIN"; exit 0; }
# Before the lock too: CI builds the scheduler and kubelet into this directory while the main suite,
# which needs only what is here already, starts (a binary appears whole: built as .tmp, then moved).
answer_if_cached
lock "$LOCK"
answer_if_cached # the build that held the lock may have made them

go_env
start=$(date +%s)

# ---------------------------------------------------------------- kubernetes
build_k8s() {
  local minor="${K8S_VERSION#v1.}"            # 34.4
  local staging_version="v0.${minor}"          # v0.34.4
  local major_minor="${minor%%.*}"             # 34
  local mod="$DIR/tools-k8s"
  mkdir -p "$mod"
  log "resolving k8s.io/kubernetes@$K8S_VERSION"
  local gomod
  gomod=$(cd "$mod" && go mod download -json "k8s.io/kubernetes@$K8S_VERSION" \
    | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')
  [ -f "$gomod" ] || { log "could not download k8s.io/kubernetes@$K8S_VERSION go.mod"; return 1; }
  local staging
  staging=$(grep -E '^[[:space:]]*k8s\.io/[^ ]+ v0\.0\.0([[:space:]]|$)' "$gomod" | awk '{print $1}' | sort -u)
  [ -n "$staging" ] || { log "no v0.0.0 staging requirements found in $gomod"; return 1; }
  {
    echo "module netattach.local/e2e-tools-k8s"
    echo
    echo "go 1.24"
    echo
    echo "require k8s.io/kubernetes $K8S_VERSION"
    echo
    for m in $staging; do echo "replace $m => $m $staging_version"; done
  } > "$mod/go.mod"
  {
    echo "//go:build tools"
    echo
    echo "package tools"
    echo
    echo "import ("
    for b in $SERVERS kubectl; do echo "	_ \"k8s.io/kubernetes/cmd/$b\""; done
    echo ")"
  } > "$mod/tools.go"
  rm -f "$mod/go.sum"
  log "fetching dependencies ($(echo "$staging" | wc -l) staging modules replaced with $staging_version)"
  local gets=() b
  for b in $SERVERS kubectl; do gets+=("k8s.io/kubernetes/cmd/$b@$K8S_VERSION"); done
  (cd "$mod" && go get "${gets[@]}") >&2
  local date; date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
  local ld="-s -w"
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$major_minor"
    ld="$ld -X $pkg.gitTreeState=clean -X $pkg.buildDate=$date"
  done
  for b in $SERVERS; do
    if ! works "$BIN/$b" --version; then
      log "building $b (slow: several minutes)"
      (cd "$mod" && go build -trimpath -ldflags="$ld" -o "$BIN/$b.tmp" "k8s.io/kubernetes/cmd/$b") >&2
      mv "$BIN/$b.tmp" "$BIN/$b"
    fi
  done
  if ! works "$BIN/kubectl" version --client; then
    log "building kubectl"
    (cd "$mod" && go build -trimpath -ldflags="$ld" -o "$BIN/kubectl.tmp" k8s.io/kubernetes/cmd/kubectl) >&2
    mv "$BIN/kubectl.tmp" "$BIN/kubectl"
  fi
}

# ---------------------------------------------------------------------- etcd
build_etcd() {
  local mod="$DIR/tools-etcd"
  mkdir -p "$mod"
  cat > "$mod/go.mod" <<EOF
module netattach.local/e2e-tools-etcd

go 1.24
EOF
  cat > "$mod/tools.go" <<'EOF'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
EOF
  rm -f "$mod/go.sum"
  log "building etcd $ETCD_VERSION"
  (cd "$mod" && go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION" \
    && go build -trimpath -ldflags="-s -w" -o "$BIN/etcd.tmp" go.etcd.io/etcd/server/v3) >&2 || return 1
  mv "$BIN/etcd.tmp" "$BIN/etcd"
}

install_etcd_apt() {
  [ "${NETATTACH_E2E_NO_APT:-}" = 1 ] && return 1
  command -v apt-get >/dev/null 2>&1 || return 1
  log "falling back to Debian etcd-server"
  if [ ! -x /usr/bin/etcd ]; then
    local sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends etcd-server >&2
    # the package may start a system etcd on :2379; we do not want it
    $sudo systemctl disable --now etcd >/dev/null 2>&1 || true
  fi
  ln -sf /usr/bin/etcd "$BIN/etcd"
}

if ! works "$BIN/etcd" --version; then
  if [ "${NETATTACH_E2E_ETCD:-build}" = apt ]; then
    install_etcd_apt || { log "could not install etcd-server"; exit 1; }
  else
    build_etcd || install_etcd_apt || { log "could not get etcd"; exit 1; }
  fi
fi
if ! servers_work || ! works "$BIN/kubectl" version --client; then
  build_k8s
fi

for b in $SERVERS kubectl etcd; do
  works "$BIN/$b" --version || works "$BIN/$b" version --client || { log "$b does not run"; exit 1; }
done
log "done in $(( $(date +%s) - start ))s: $BIN ($(du -sh "$BIN" | cut -f1))"
echo "$BIN"
exit 0
}
