#!/usr/bin/env bash
# Installs node_modules from package-lock.json (npm ci) when it is missing or older than the lock.
set -euo pipefail
cd "$(dirname "$0")/.."
# Node 24 from scripts/ensure-node.sh (the machine's when it has it, else from the npm registry) first on PATH.
PATH="$(bash scripts/ensure-node.sh):$PATH"
export PATH

stamp=node_modules/.package-lock.json # npm writes it on every install
if [ -d node_modules ] && [ -f "$stamp" ] && ! [ package-lock.json -nt "$stamp" ]; then
  exit 0
fi

log="$(mktemp)"
trap 'rm -f "$log"' EXIT
echo "ensure-node-modules: npm ci" >&2
if npm ci --no-audit --no-fund >"$log" 2>&1; then
  cat "$log" >&2
  exit 0
fi
cat "$log" >&2
# npm 11 refuses a lock that lacks optional packages for other platforms (npm/cli#4828, #8669): which of them it
# finds missing depends on what the registry in use serves that day (`Missing: @swc/core-darwin-arm64@ from lock
# file`, with or without a version). When those platform packages are all it complains of, `npm install --no-save`
# installs the locked tree for this platform without touching package-lock.json.
platform_only() {
  local missing
  missing="$(grep -oE 'Missing: [^ ]+ from lock file' "$log" | sed -E 's/^Missing: //; s/ from lock file$//' | sort -u)"
  [ -n "$missing" ] || return 1
  ! grep -vqE '^@?[^@]*(darwin|win32|android|freebsd|linux-(arm|ppc64|s390x|riscv64|loong64|x64-musl)|wasm32|openharmony|netbsd|openbsd|sunos|aix)[^@]*@' <<<"$missing"
}
if platform_only; then
  echo "ensure-node-modules: npm ci refused the lock only over optional packages of other platforms; installing the same locked tree with npm install --no-save" >&2
  npm install --no-save --no-audit --no-fund >&2
  exit 0
fi
echo "ensure-node-modules: npm ci failed (output above)" >&2
exit 1
