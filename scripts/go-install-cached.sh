#!/usr/bin/env bash
# go-install-cached.sh DIR_NAME MODULE_PATH@VERSION BINARY
# Prints the absolute path of BINARY, built once with `go install MODULE_PATH@VERSION` into
# $cache/DIR_NAME/ (outside the checkout); logs go to stderr. Warm path: one stat. One build at a time per directory
# (a second caller waits on the lock and then finds the binary). A failed build fails loudly: no fallback.
set -euo pipefail

[ "$#" -eq 3 ] || { echo "usage: $0 DIR_NAME MODULE@VERSION BINARY" >&2; exit 2; }
dir_name="$1"
module="$2"
binary="$3"
# shellcheck source=cached-install.sh
. "$(dirname "$0")/cached-install.sh"
bin_dir="$cache_root/$dir_name"
bin="$bin_dir/$binary"

log() { echo "go-install-cached($dir_name): $*" >&2; }

# The binary is moved into place whole, last: it is its own mark of a finished build.
cached_install "go-install-cached($dir_name)" "$bin_dir" "$bin" "$bin"

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
  else
    log "go is missing; installing golang-go with apt-get"
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get update >&2
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y golang-go >&2
  fi
fi

log "building $module with $(go version) (takes minutes once)"
# Build into a scratch dir and move the finished binary into place, so a reader never sees a half-written file.
tmp_bin_dir="$(mktemp -d "$bin_dir/.build.XXXXXX")"
trap 'rm -rf "$tmp_bin_dir"' EXIT
start=$(date +%s)
if ! GOBIN="$tmp_bin_dir" go install "$module" >&2; then
  log "FAILED (error above): go install $module"
  exit 1
fi
[ -x "$tmp_bin_dir/$binary" ] || { log "FAILED: go install $module made no $binary"; exit 1; }
mv -f "$tmp_bin_dir/$binary" "$bin"
log "built $bin in $(( $(date +%s) - start ))s"
installed
