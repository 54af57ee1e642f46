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

# go_install_released BIN NAME PACKAGE@VERSION LDFLAGS: builds a released command whose go.mod has
# no replace directives (`go install`, as released) into BIN/NAME, through a scratch directory so
# that a half-finished build never looks cached, then checks it with the script's works().
go_install_released() {
  local bin="$1" name="$2" pkg="$3" ldflags="$4" start
  go_env
  start=$(date +%s)
  log "building $pkg"
  GOBIN="$bin/.tmp" nice -n 10 go install -trimpath -ldflags="$ldflags" "$pkg" >&2
  mv "$bin/.tmp/$name" "$bin/$name"
  rmdir "$bin/.tmp"
  works "$bin/$name" || { log "the built $name does not report the version of $pkg"; exit 1; }
  log "done in $(( $(date +%s) - start ))s: $bin/$name ($(du -sh "$bin/$name" | cut -f1))"
}
