#!/usr/bin/env bash
# Prints the absolute path of redis-server on stdout; installs Debian's redis-server with apt when missing.
set -euo pipefail

log() { echo "ensure-redis: $*" >&2; }

if ! command -v redis-server >/dev/null 2>&1; then
  log "redis-server is missing; installing it with apt-get"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y redis-server >&2
  # The package starts a system service on 6379 where an init system exists; we never rely on it.
fi
path="$(command -v redis-server)"
"$path" --version >&2
echo "$path"
