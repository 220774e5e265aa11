#!/usr/bin/env bash
# What `make test` runs: installs what is missing, builds, type-checks the tests, runs jest against a real Temporal
# dev server and a real redis-server (started by test/helpers/global-setup.ts on free loopback ports), and ends with
# one summary line: `N passed, N failed, N skipped`. Exits with jest's exit code. Extra arguments go to jest.
set -uo pipefail
cd "$(dirname "$0")/.."

mkdir -p .run
results=.run/jest-results.json
summary_file=.run/test-summary.txt
rm -f "$results" "$summary_file"

summary() {
  echo "$1" >"$summary_file"
  echo "$1"
}
fail_before_jest() {
  echo "test.sh: $1 failed; no test ran" >&2
  summary "0 passed, 1 failed, 0 skipped"
  exit 1
}

bash scripts/ensure-node-modules.sh || fail_before_jest "npm ci"
bash scripts/ensure-redis.sh >/dev/null || fail_before_jest "scripts/ensure-redis.sh"
TEMPORAL_BIN="$(bash scripts/ensure-temporal.sh)" || fail_before_jest "scripts/ensure-temporal.sh"
export TEMPORAL_BIN
# test/fuzz/schemathesis.test.ts fuzzes the webhook and the poll with it (a venv from PyPI, outside the checkout).
SCHEMATHESIS_BIN="$(bash scripts/ensure-schemathesis.sh)" || fail_before_jest "scripts/ensure-schemathesis.sh"
export SCHEMATHESIS_BIN
if ! command -v docker-compose >/dev/null 2>&1; then
  # test/unit/docker-compose.test.ts validates docker-compose.yml with it.
  echo "test.sh: installing docker-compose with apt-get" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y docker-compose; } >&2 \
    || fail_before_jest "installing docker-compose"
fi
if ! command -v chromium >/dev/null 2>&1; then
  # test/integration/docs-page.test.ts renders GET /docs in it (headless, driven by playwright-core).
  echo "test.sh: installing chromium with apt-get" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  { $sudo apt-get update && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; } >&2 \
    || fail_before_jest "installing chromium"
fi
npm run build || fail_before_jest "npm run build"
npx tsc -p tsconfig.test.json --noEmit || fail_before_jest "type-checking the tests (tsc -p tsconfig.test.json)"

npx jest --json --outputFile="$results" "$@"
rc=$?

# A run that failed without a failing test (no tests found, a crash, a teardown error) still counts one failure.
line="$(node -e '
  const fs = require("fs");
  const [file, rc] = [process.argv[1], Number(process.argv[2])];
  let r;
  try { r = JSON.parse(fs.readFileSync(file, "utf8")); } catch { console.log("0 passed, 1 failed, 0 skipped"); process.exit(0); }
  let failed = (r.numFailedTests || 0) + (r.numRuntimeErrorTestSuites || 0);
  if (rc !== 0 && failed === 0) failed = 1;
  const skipped = (r.numPendingTests || 0) + (r.numTodoTests || 0);
  console.log(`${r.numPassedTests || 0} passed, ${failed} failed, ${skipped} skipped`);
' "$results" "$rc")"
if [ "$rc" -eq 0 ] && [ ! -s "$results" ]; then rc=1; fi
summary "$line"
exit "$rc"
