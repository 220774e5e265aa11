#!/usr/bin/env bash
# Fuzzes the webhook (both URLs) and the status poll from the service's own OpenAPI document with schemathesis:
#   bash scripts/fuzz.sh                      # 500 generated requests per operation, then the coverage phase
#   FUZZ_MAX_EXAMPLES=2000 bash scripts/fuzz.sh
# Installs schemathesis from PyPI into a venv outside the checkout (scripts/ensure-schemathesis.sh), then runs
# test/fuzz/schemathesis.test.ts through scripts/test.sh: a real Temporal dev server and redis-server on free loopback
# ports, the ingress in-process on another. Fails on any 5xx. `make test` runs the same test with 100 per operation.
# test/fuzz also runs the unit suite's property tests at their deep counts (deep-properties.test.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
SCHEMATHESIS_BIN="$(bash scripts/ensure-schemathesis.sh)"
export SCHEMATHESIS_BIN
export FUZZ_MAX_EXAMPLES="${FUZZ_MAX_EXAMPLES:-500}"
export FUZZ_TIMEOUT_MS="${FUZZ_TIMEOUT_MS:-900000}"
exec bash scripts/test.sh test/fuzz "$@"
