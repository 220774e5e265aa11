#!/usr/bin/env bash
# Prints the path of an n8n CLI (n8n 2.8.4, the newest for Node 20) installed once into the cache outside the
# checkout; logs go to stderr. test/clients/n8n.test.ts imports and runs docs/integrations/n8n/ in it. The `xlsx`
# override pins a registry version: n8n's own dependency points at a tarball URL this machine cannot reach.
# About 3 minutes and 2.3 GB cold; one stat warm.
set -euo pipefail
N8N_VERSION=2.8.4
XLSX_VERSION=0.18.5
cache_root="${EXTERNAL_SIGNALS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/external-signals}"
dir="$cache_root/n8n-$N8N_VERSION"
bin="$dir/node_modules/.bin/n8n"
done_marker="$dir/.installed"
log() { echo "ensure-n8n: $*" >&2; }

if [ -f "$done_marker" ] && [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
mkdir -p "$dir"
exec 9>"$dir/.install.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if [ -f "$done_marker" ] && [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi
log "installing n8n $N8N_VERSION into $dir (minutes, once)"
cat >"$dir/package.json" <<JSON
{ "name": "n8n-for-tests", "private": true, "dependencies": { "n8n": "$N8N_VERSION" }, "overrides": { "xlsx": "$XLSX_VERSION" } }
JSON
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
"$bin" --version >&2
touch "$done_marker"
echo "$bin"
