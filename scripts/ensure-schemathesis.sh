#!/usr/bin/env bash
# Prints the absolute path of the schemathesis CLI on stdout; logs go to stderr. Cold path: a Python venv with
# schemathesis from PyPI, kept outside the checkout (~/.cache/external-signals/schemathesis-<version>/), so later runs
# find it in milliseconds. Installs Debian's python3-venv with apt when the venv module is missing.
set -euo pipefail

SCHEMATHESIS_VERSION=4.32.5
# shellcheck source=cached-install.sh
. "$(dirname "$0")/cached-install.sh"
venv="$cache_root/schemathesis-$SCHEMATHESIS_VERSION"
bin="$venv/bin/schemathesis"

log() { echo "ensure-schemathesis: $*" >&2; }

cached_install ensure-schemathesis "$venv" "$bin"

python="$(command -v python3 || true)"
if [ -z "$python" ] || ! "$python" -c 'import venv, ensurepip' >/dev/null 2>&1; then
  log "python3 with venv is missing; installing it with apt-get"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y python3 python3-venv >&2
  python="$(command -v python3)"
fi

log "installing schemathesis $SCHEMATHESIS_VERSION from PyPI into $venv"
# A venv left by a failed install is made anew (the lock file stays).
find "$venv" -mindepth 1 -maxdepth 1 ! -name .install.lock -exec rm -rf {} +
"$python" -m venv "$venv" >&2
"$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >&2 || exit 1
"$bin" --version >&2
installed
