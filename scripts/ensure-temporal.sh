#!/usr/bin/env bash
# Prints the absolute path of the Temporal CLI (which embeds the dev server) on stdout; logs go to stderr.
# Cold path: builds it once with `go install` into a per-user cache. Warm path: one stat and one exec.
# If the build fails, this fails loudly: there is no fallback and no fake server.
set -euo pipefail

TEMPORAL_CLI_VERSION=v1.5.1   # later tags do not build with `go install`
cache_root="${EXTERNAL_SIGNALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/external-signals}"
bin_dir="$cache_root/temporal-$TEMPORAL_CLI_VERSION"
bin="$bin_dir/temporal"

log() { echo "ensure-temporal: $*" >&2; }

if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$bin_dir"
# One build at a time per cache dir; a second caller waits and then finds the binary.
exec 9>"$bin_dir/.build.lock"
if command -v flock >/dev/null 2>&1; then
  log "taking the build lock $bin_dir/.build.lock"
  flock 9
fi
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

if ! command -v go >/dev/null 2>&1; then
  if [ -x /usr/local/go/bin/go ]; then
    export PATH="/usr/local/go/bin:$PATH"
  else
    log "go is missing; installing golang-go with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update >&2
    apt-get install -y golang-go >&2
  fi
fi

log "building temporal CLI $TEMPORAL_CLI_VERSION with $(go version) (takes several minutes once)"
# Build into a scratch dir and move the finished binary into place, so a reader never sees a half-written file.
tmp_bin_dir="$(mktemp -d "$bin_dir/.build.XXXXXX")"
trap 'rm -rf "$tmp_bin_dir"' EXIT
start=$(date +%s)
if ! GOBIN="$tmp_bin_dir" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION" >&2; then
  log "FAILED (error above): GOBIN=$bin_dir go install github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
  exit 1
fi
if ! "$tmp_bin_dir/temporal" --version >&2; then
  log "FAILED: the built binary does not run: $tmp_bin_dir/temporal --version"
  exit 1
fi
mv -f "$tmp_bin_dir/temporal" "$bin"
log "built $bin in $(( $(date +%s) - start ))s"
echo "$bin"
