#!/usr/bin/env bash
# What `make dist` runs: builds the service (npm run build) and the MT5 bridge package into dist/mt5-bridge/
# (scripts/dist-mt5.ts; docs/mt5-bridge.md). `make start` and `make test` run it too; the Dockerfile runs the same two steps.
set -euo pipefail
cd "$(dirname "$0")/.."
# Node 24 from scripts/ensure-node.sh (the machine's when it has it, else from the npm registry) first on PATH.
PATH="$(bash scripts/ensure-node.sh):$PATH"
export PATH
bash scripts/ensure-node-modules.sh
PYTHON="${PYTHON:-$(bash scripts/ensure-python.sh)}"
export PYTHON
[ "${SKIP_BUILD:-0}" = 1 ] || npm run build >&2
node dist/scripts/dist-mt5.js
