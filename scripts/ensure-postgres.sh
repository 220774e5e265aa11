#!/usr/bin/env bash
# Makes sure PostgreSQL 15's server binaries are here (Debian's postgresql-15, installed with apt-get when missing)
# and prints their directory. The cluster profile runs its own private cluster from them (initdb on a fresh
# directory, a free loopback port); the Debian service itself is never started.
set -euo pipefail
dir="${POSTGRES_BIN_DIR:-/usr/lib/postgresql/15/bin}"
if [ ! -x "$dir/postgres" ] || [ ! -x "$dir/initdb" ] || ! command -v pg_isready >/dev/null 2>&1; then
  echo "ensure-postgres: installing postgresql-15 with apt-get" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update >&2
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y postgresql-15 postgresql-client-15 >&2
fi
[ -x "$dir/postgres" ] || { echo "ensure-postgres: no $dir/postgres after the install" >&2; exit 1; }
echo "$dir"
