#!/usr/bin/env bash
# What `make test` runs: installs what is missing, builds, type-checks the tests, runs jest against a real Temporal
# dev server and a real redis-server (started by test/helpers/global-setup.ts on free loopback ports), and ends with
# one summary line: `N passed, N failed, N skipped` (jest's tests and the MT5 bridge's pytest tests together). Exits
# non-zero when either failed. Extra arguments go to jest, except those under bridges/ which go to pytest; with
# arguments, only the side they name runs.
set -uo pipefail
cd "$(dirname "$0")/.."

mkdir -p .run
results=.run/jest-results.json
pytest_results=.run/pytest-results.xml
summary_file=.run/test-summary.txt
rm -f "$results" "$pytest_results" "$summary_file" .run/infra-failure.txt

jest_args=()
pytest_args=()
named_pytest=0
for arg in "$@"; do
  case "$arg" in
    bridges/mt5 | bridges/mt5/) named_pytest=1 ;;
    bridges/mt5/*) named_pytest=1; pytest_args+=("${arg#bridges/mt5/}") ;;
    *) jest_args+=("$arg") ;;
  esac
done
run_jest=1
run_pytest=1
if [ "$#" -gt 0 ]; then
  [ "${#jest_args[@]}" -gt 0 ] || run_jest=0
  [ "$named_pytest" -eq 1 ] || run_pytest=0
fi

summary() {
  echo "$1" >"$summary_file"
  echo "$1"
}
fail_before_jest() {
  echo "test.sh: $1 failed; no test ran" >&2
  summary "0 passed, 1 failed, 0 skipped"
  exit 1
}

# Node 24 from scripts/ensure-node.sh (the machine's when it has it, else from the npm registry) first on PATH.
node_bin="$(bash scripts/ensure-node.sh)" || fail_before_jest "scripts/ensure-node.sh"
export PATH="$node_bin:$PATH"
echo "test.sh: node $(node --version), npm $(npm --version 2>/dev/null)" >&2
bash scripts/ensure-node-modules.sh || fail_before_jest "npm ci"
bash scripts/ensure-redis.sh >/dev/null || fail_before_jest "scripts/ensure-redis.sh"
TEMPORAL_BIN="$(bash scripts/ensure-temporal.sh)" || fail_before_jest "scripts/ensure-temporal.sh"
export TEMPORAL_BIN
if [ "${TEMPORAL_PROFILE:-}" = "cluster" ]; then
  # The cluster profile (docs/cluster-profile.md): the real Temporal server and its sql tool, on a PostgreSQL of
  # this run's own (support/temporal-cluster.ts).
  TEMPORAL_SERVER_BIN="$(bash scripts/ensure-temporal-server.sh server)" || fail_before_jest "scripts/ensure-temporal-server.sh server"
  TEMPORAL_SQL_BIN="$(bash scripts/ensure-temporal-server.sh sql)" || fail_before_jest "scripts/ensure-temporal-server.sh sql"
  export TEMPORAL_SERVER_BIN TEMPORAL_SQL_BIN
  bash scripts/ensure-postgres.sh >/dev/null || fail_before_jest "scripts/ensure-postgres.sh"
fi
# test/fuzz/schemathesis.test.ts fuzzes the webhook and the poll with it (a venv from PyPI, outside the checkout).
SCHEMATHESIS_BIN="$(bash scripts/ensure-schemathesis.sh)" || fail_before_jest "scripts/ensure-schemathesis.sh"
export SCHEMATHESIS_BIN
# test/clients/n8n.test.ts imports and runs the n8n workflow of docs/integrations/n8n/ in a real n8n.
N8N_BIN="$(bash scripts/ensure-n8n.sh)" || fail_before_jest "scripts/ensure-n8n.sh"
export N8N_BIN
# test/workflow/ runs the workflows on Temporal's time-skipping test server (built from Maven, outside the checkout).
TEMPORAL_TEST_SERVER_BIN="$(bash scripts/ensure-test-server.sh)" || fail_before_jest "scripts/ensure-test-server.sh"
export TEMPORAL_TEST_SERVER_BIN
# The MT5 bridge's pytest tests, and its process in test/conformance/mt5.test.ts, run on this python.
PYTHON="$(bash scripts/ensure-python.sh)" || fail_before_jest "scripts/ensure-python.sh"
export PYTHON
if ! command -v docker-compose >/dev/null 2>&1; then
  # test/integration/docker-compose.test.ts validates docker-compose.yml with it.
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
# make dist: the MT5 bridge package (dist/mt5-bridge/), which the ingress serves and test/e2e/mt5-package.test.ts unpacks.
SKIP_BUILD=1 bash scripts/dist.sh || fail_before_jest "make dist (scripts/dist.sh)"
npx tsc -p tsconfig.test.json --noEmit || fail_before_jest "type-checking the tests (tsc -p tsconfig.test.json)"

pytest_rc=0
if [ "$run_pytest" -eq 1 ]; then
  # Unit tests of bridges/mt5 against its MetaTrader5 double; the working directory keeps .pytest_cache out of src.
  (cd bridges/mt5 && PYTHONDONTWRITEBYTECODE=1 "$PYTHON" -m pytest -q -p no:cacheprovider --junitxml="../../$pytest_results" \
    "${pytest_args[@]}")
  pytest_rc=$?
fi
rc=0
if [ "$run_jest" -eq 1 ]; then
  npx jest --json --outputFile="$results" "${jest_args[@]}"
  rc=$?
fi

# A run that failed without a failing test (no tests found, a crash, a teardown error) still counts one failure.
line="$(node -e '
  const fs = require("fs");
  const [file, rc, runJest, pyFile, pyRc, runPy] = process.argv.slice(1);
  let passed = 0, failed = 0, skipped = 0;
  if (runJest === "1") {
    let r;
    try { r = JSON.parse(fs.readFileSync(file, "utf8")); } catch { r = undefined; }
    if (!r) failed += 1;
    else {
      let f = (r.numFailedTests || 0) + (r.numRuntimeErrorTestSuites || 0);
      if (Number(rc) !== 0 && f === 0) f = 1;
      passed += r.numPassedTests || 0;
      failed += f;
      skipped += (r.numPendingTests || 0) + (r.numTodoTests || 0);
    }
  }
  if (runPy === "1") {
    let xml = "";
    try { xml = fs.readFileSync(pyFile, "utf8"); } catch {}
    const suite = /<testsuite\b[^>]*>/.exec(xml);
    const attr = (n) => Number((suite && new RegExp(` ${n}="(\\d+)"`).exec(suite[0]) || [0, 0])[1]);
    if (!suite) failed += 1;
    else {
      let f = attr("failures") + attr("errors");
      if (Number(pyRc) !== 0 && f === 0) f = 1;
      passed += attr("tests") - attr("failures") - attr("errors") - attr("skipped");
      failed += f;
      skipped += attr("skipped");
    }
  }
  console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
' "$results" "$rc" "$run_jest" "$pytest_results" "$pytest_rc" "$run_pytest")"
if [ "$run_jest" -eq 1 ] && [ "$rc" -eq 0 ] && [ ! -s "$results" ]; then rc=1; fi
# Why it failed, at the end, where a log cut to its head and tail still shows it: the test infrastructure's own
# words, or each failed test's name and the first lines of its message.
if [ -s .run/infra-failure.txt ]; then
  { echo "test.sh: the test infrastructure did not start:"; cut -c1-400 .run/infra-failure.txt | tail -n 40; } >&2
elif [ "$run_jest" -eq 1 ] && [ "$rc" -ne 0 ] && [ -s "$results" ]; then
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    for (const suite of r.testResults || []) {
      const failed = (suite.assertionResults || []).filter((a) => a.status === "failed");
      if (failed.length === 0 && suite.status === "failed") failed.push({ fullName: "(the file itself)", failureMessages: [suite.message || ""] });
      for (const a of failed) {
        const why = String((a.failureMessages || [])[0] || "").replace(/\x1b\[[0-9;]*m/g, "").split("\n").filter((l) => l.trim() && !/^\s+at /.test(l)).slice(0, 4);
        process.stderr.write(`test.sh: FAILED ${require("path").relative(process.cwd(), suite.name)} › ${a.fullName}\n${why.map((l) => "    " + l.slice(0, 300)).join("\n")}\n`);
      }
    }
  ' "$results" || true
fi
if [ "$rc" -eq 0 ] && [ "$pytest_rc" -ne 0 ]; then rc="$pytest_rc"; fi
summary "$line"
exit "$rc"
