#!/usr/bin/env bash
# Installs node_modules from package-lock.json (npm ci) when it is missing or older than the lock.
set -euo pipefail
cd "$(dirname "$0")/.."

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
# npm 11 refuses a lock that lacks optional packages for other platforms (npm/cli#4828, #8669) when the registry in
# use does not serve them (`Missing: @swc/core-darwin-arm64@ from lock file`, no version). Nothing else is out of
# sync then, and `npm install --no-save` installs exactly the locked tree without touching package-lock.json.
if grep -q 'Missing: .*@ from lock file' "$log" && ! grep -qE 'Missing: [^ ]+@[0-9][^ @]* from lock file' "$log"; then
  echo "ensure-node-modules: npm ci refused the lock only over optional packages of other platforms; installing the same locked tree with npm install --no-save" >&2
  npm install --no-save --no-audit --no-fund >&2
  exit 0
fi
echo "ensure-node-modules: npm ci failed (output above)" >&2
exit 1
