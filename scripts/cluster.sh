#!/usr/bin/env bash
# `make cluster`: installs and builds what is missing, then runs scripts/cluster.ts (dist/scripts/cluster.js).
set -euo pipefail
cd "$(dirname "$0")/.."
# Node 24 from scripts/ensure-node.sh (the machine's when it has it, else from the npm registry) first on PATH.
PATH="$(bash scripts/ensure-node.sh):$PATH"
export PATH
bash scripts/ensure-node-modules.sh
bash scripts/ensure-redis.sh >/dev/null
bash scripts/ensure-postgres.sh >/dev/null
TEMPORAL_SERVER_BIN="$(bash scripts/ensure-temporal-server.sh server)"
TEMPORAL_SQL_BIN="$(bash scripts/ensure-temporal-server.sh sql)"
TEMPORAL_UI_BIN="$(bash scripts/ensure-temporal-server.sh ui)"
export TEMPORAL_SERVER_BIN TEMPORAL_SQL_BIN TEMPORAL_UI_BIN
mkdir -p .run
npm run build >.run/build.log 2>&1 || { tail -n 40 .run/build.log >&2; echo "cluster: npm run build failed" >&2; exit 1; }
exec node dist/scripts/cluster.js
