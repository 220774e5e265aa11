#!/usr/bin/env bash
# What `make lint` runs (and CI, before the tests): ESLint with typescript-eslint's strict type-checked rules
# (eslint.config.mjs: also no file over 400 lines, no workflow named by a string outside its definition, src/bridge
# and src/bridge-kit never importing each other), Prettier's check, no import cycle (madge), no unused export, file or
# dependency (knip, knip.json), and the domain (src/domain) importing nothing of ours but itself. Prints one line per check and exits non-zero when any fails.
set -uo pipefail
cd "$(dirname "$0")/.."
# Node 24 from scripts/ensure-node.sh (the machine's when it has it, else from the npm registry) first on PATH.
node_bin="$(bash scripts/ensure-node.sh)" || { echo "lint: scripts/ensure-node.sh failed" >&2; exit 1; }
export PATH="$node_bin:$PATH"
bash scripts/ensure-node-modules.sh >/dev/null || { echo "lint: npm ci failed" >&2; exit 1; }

rc=0
check() {
  local name="$1"; shift
  if "$@"; then echo "lint: $name: ok"; else echo "lint: $name: FAILED" >&2; rc=1; fi
}
sources=(src workflows activities scripts bench support test)
check eslint npx eslint --max-warnings 0 "${sources[@]}"
check prettier npx prettier --check --log-level warn "src/**/*.ts" "workflows/**/*.ts" "activities/**/*.ts" "scripts/**/*.ts" "bench/**/*.ts" "support/**/*.ts" "test/**/*.ts"
check "no import cycle" npx madge --circular --no-spinner --warning --extensions ts --ts-config tsconfig.json src workflows activities support
domain_imports() {
  # Only node built-ins, zod and files of src/domain itself.
  local bad
  bad="$(grep -hoE "from '[^']+'" src/domain/*.ts | sed -E "s/from '([^']+)'/\1/" | grep -vE "^(node:|zod$|\./)" || true)"
  [ -z "$bad" ] || { echo "src/domain imports: $bad" >&2; return 1; }
}
check "no unused export, file or dependency (knip)" npx knip --no-progress
check "src/domain imports nothing of ours" domain_imports
exit "$rc"
