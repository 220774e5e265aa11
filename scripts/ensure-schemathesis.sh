#!/usr/bin/env bash
# Prints the absolute path of the schemathesis CLI on stdout; logs go to stderr. Cold path: a Python venv with
# schemathesis from PyPI, kept outside the checkout (~/.cache/external-signals/schemathesis-<version>/), so later runs
# find it in milliseconds. Installs Debian's python3-venv with apt when the venv module is missing.
set -euo pipefail

SCHEMATHESIS_VERSION=4.32.5
cache_root="${EXTERNAL_SIGNALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/external-signals}"
venv="$cache_root/schemathesis-$SCHEMATHESIS_VERSION"
bin="$venv/bin/schemathesis"
done_marker="$venv/.installed" # written last: a venv without it is a broken install, made again

log() { echo "ensure-schemathesis: $*" >&2; }

if [ -f "$done_marker" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache_root"
# One install at a time per cache dir; a second caller waits and then finds the binary.
exec 9>"$cache_root/.schemathesis.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ -f "$done_marker" ]; then
  echo "$bin"
  exit 0
fi

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
rm -rf "$venv"
"$python" -m venv "$venv" >&2
"$venv/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION" >&2 || { rm -rf "$venv"; exit 1; }
"$bin" --version >&2
touch "$done_marker"
echo "$bin"
