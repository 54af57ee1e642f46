#!/usr/bin/env bash
# Everything the node suite (test/e2e/node.e2e.ts) needs, built or installed once:
#   1. containerd, runc and the reference CNI plugins (bridge, host-local, loopback) from Debian,
#      installed with apt-get when absent (root; skipped when they are there);
#   2. Kubernetes $NETATTACH_K8S_VERSION (default v1.37.2, the DRA suite's) with kube-scheduler,
#      kube-controller-manager and the kubelet: build.sh with NETATTACH_E2E_SCHEDULING=1 and
#      NETATTACH_E2E_NODE=1, cached in ~/.cache/netattach-e2e/<version>/bin (the DRA build's
#      binaries are reused; only the kubelet is added);
#   3. the fake device plugin and the local images (node/build-parts.sh).
# Prints, as its last three stdout lines:
#   bin=DIR     kube-apiserver, kubectl, etcd, kube-scheduler, kube-controller-manager, kubelet
#   parts=DIR   fake-device-plugin, images/pause.tar, images/netprobe.tar
#   cni=DIR     the CNI plugins' directory
#
# Environment: NETATTACH_K8S_VERSION, NETATTACH_E2E_CACHE, NETATTACH_E2E_NO_APT=1 (never install).
set -euo pipefail
{
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { echo "[e2e-node-build] $*" >&2; }
start=$(date +%s)

CNI_DIR=/usr/lib/cni
have_debian_parts() {
  command -v containerd >/dev/null && command -v runc >/dev/null && command -v ctr >/dev/null \
    && [ -x "$CNI_DIR/bridge" ] && [ -x "$CNI_DIR/host-local" ] && [ -x "$CNI_DIR/loopback" ]
}
if ! have_debian_parts; then
  if [ "${NETATTACH_E2E_NO_APT:-}" = 1 ] || ! command -v apt-get >/dev/null; then
    log "containerd, runc or containernetworking-plugins missing, and apt-get is not to be used"; exit 1
  fi
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  log "installing containerd, runc, containernetworking-plugins (apt-get)"
  # another apt-get may hold the lock (CI starts several installs): wait for it
  $sudo apt-get -o DPkg::Lock::Timeout=600 update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
    containerd runc containernetworking-plugins >&2
  # the package may start a system containerd; the suite runs its own, on its own socket
  $sudo systemctl disable --now containerd >/dev/null 2>&1 || true
  have_debian_parts || { log "the Debian packages did not provide containerd, runc, ctr and $CNI_DIR/{bridge,host-local,loopback}"; exit 1; }
fi
log "containerd $(containerd --version | awk '{print $3}'), runc $(runc --version | awk 'NR==1{print $3}'), CNI plugins in $CNI_DIR"

export NETATTACH_K8S_VERSION="${NETATTACH_K8S_VERSION:-v1.37.2}"
bin=$(NETATTACH_E2E_SCHEDULING=1 NETATTACH_E2E_NODE=1 bash "$here/build.sh" | tail -1)
[ -x "$bin/kubelet" ] || { log "build.sh printed $bin, which has no kubelet"; exit 1; }

[ -f "$here/node/build-parts.sh" ] || { log "$here/node/build-parts.sh is missing (the device plugin and images)"; exit 1; }
parts=$(bash "$here/node/build-parts.sh" | tail -1)
for f in fake-device-plugin images/pause.tar images/netprobe.tar; do
  [ -e "$parts/$f" ] || { log "build-parts.sh printed $parts, which has no $f"; exit 1; }
done

log "done in $(( $(date +%s) - start ))s"
echo "bin=$bin"
echo "parts=$parts"
echo "cni=$CNI_DIR"
exit 0
}
