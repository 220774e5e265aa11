#!/usr/bin/env bash
# Prints the path of an n8n CLI (n8n 2.8.4; its engines take Node 20 to 24) installed once into the cache outside the
# checkout; logs go to stderr. test/clients/n8n.test.ts imports and runs docs/integrations/n8n/ in it. The `xlsx`
# override pins a registry version: n8n's own dependency points at a tarball URL this machine cannot reach.
# About 3 minutes and 2.3 GB cold; one stat warm.
set -euo pipefail
N8N_VERSION=2.8.4
XLSX_VERSION=0.18.5
# shellcheck source=cached-install.sh
. "$(dirname "$0")/cached-install.sh"
dir="$cache_root/n8n-$N8N_VERSION"
bin="$dir/node_modules/.bin/n8n"
cached_install n8n "$dir" "$bin"
PATH="$(bash "$(dirname "$0")/ensure-node.sh"):$PATH" # n8n runs on the project's Node
export PATH

cat >"$dir/package.json" <<JSON
{ "name": "n8n-for-tests", "private": true, "dependencies": { "n8n": "$N8N_VERSION" }, "overrides": { "xlsx": "$XLSX_VERSION" } }
JSON
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
"$bin" --version >&2
installed
