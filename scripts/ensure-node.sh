#!/usr/bin/env bash
# Prints the bin directory of the Node.js the project runs on (node, npm, npx): Node 24, an LTS line (supported until
# April 2028; the n8n the tests run takes at most 24.x), as package.json's engines ask. The machine's own node is used
# when it is 24 or later; otherwise Node and npm come from the npm registry as packages (node-<os>-<arch>, which holds
# the official binary, and npm), installed once by the machine's npm into the cache outside the checkout. Every script
# that runs node, npm or npx puts this directory first on PATH: PATH="$(bash scripts/ensure-node.sh):$PATH".
# Logs go to stderr.
set -euo pipefail

NODE_VERSION=24.22.3
NPM_VERSION=11.19.1 # the npm package-lock.json was made with
NODE_MIN_MAJOR=24

if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 &&
  [ "$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)" -ge "$NODE_MIN_MAJOR" ]; then
  dirname "$(command -v node)"
  exit 0
fi

case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=darwin ;;
  *) echo "ensure-node: no Node package for $(uname -s); install Node $NODE_MIN_MAJOR or later" >&2; exit 1 ;;
esac
case "$(uname -m)" in
  x86_64 | amd64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "ensure-node: no Node package for $(uname -m); install Node $NODE_MIN_MAJOR or later" >&2; exit 1 ;;
esac

# shellcheck source=cached-install.sh
. "$(dirname "$0")/cached-install.sh"
dir="$cache_root/node-$NODE_VERSION-npm-$NPM_VERSION-$os-$arch"
bin="$dir/node_modules/.bin"
cached_install ensure-node "$dir" "$bin"

if ! command -v npm >/dev/null 2>&1; then
  echo "ensure-node: npm is missing; installing Debian's npm with apt-get, only to fetch Node $NODE_VERSION" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y npm; } >&2
fi
find "$dir" -mindepth 1 -maxdepth 1 ! -name .install.lock -exec rm -rf {} +
cat >"$dir/package.json" <<JSON
{ "name": "node-for-external-signals", "private": true, "dependencies": { "node-$os-$arch": "$NODE_VERSION", "npm": "$NPM_VERSION" } }
JSON
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error >&2)
[ "$("$bin/node" --version)" = "v$NODE_VERSION" ]
PATH="$bin:$PATH" npm --version >/dev/null
installed
