# Shared by build.sh, build-nri.sh, build-helm.sh, build-krew.sh and build-cni.sh (sourced; each defines log() first).

# need_go VERSION: puts Go on PATH (or /usr/local/go/bin), or exits naming the version needed.
need_go() {
  if ! command -v go >/dev/null 2>&1; then
    if [ -x /usr/local/go/bin/go ]; then export PATH="/usr/local/go/bin:$PATH"; else
      log "go not found (need Go >= $1 on PATH or at /usr/local/go)"; exit 1; fi
  fi
}

# lock FILE: serialises concurrent builds (two test runs starting at once) on fd 9.
lock() {
  exec 9>"$1"
  if command -v flock >/dev/null 2>&1; then flock 9; fi
}

# go_env: module mode even without a go.sum, the local toolchain only, static binaries.
go_env() {
  export GOFLAGS="${GOFLAGS:-} -mod=mod"
  export GOTOOLCHAIN="${GOTOOLCHAIN:-local}"
  export CGO_ENABLED=0
}
