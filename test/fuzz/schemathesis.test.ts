import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, runDir } from '../../support/infra';
import { seedOwner, startStack, type Stack } from '../helpers/stack';

/**
 * Hostile input from the published contract: schemathesis (from PyPI, in a venv outside the checkout, see
 * scripts/ensure-schemathesis.sh) reads GET /openapi.json and throws generated and mutated requests at the webhook
 * (both URLs) and the status poll of a real ingress on a free loopback port, against the run's real Temporal and Redis.
 * Half of the generated bodies carry the real secret and half of the per-account URLs the real account
 * (test/fuzz/schemathesis_hooks.py), so requests reach validation, the limiters and the Temporal start. No answer may
 * be a 5xx. `bash scripts/fuzz.sh` runs this with more examples (FUZZ_MAX_EXAMPLES).
 *
 * Two runs: the examples and fuzzing phases over all three operations, and the coverage phase (boundary and
 * negative values of every field) over the per-account webhook and the poll. schemathesis 4.32.5's coverage phase
 * crashes in its own generator on the broadcast webhook's body schema (a Hypothesis "inconsistent results" error,
 * before any request), so that one operation gets the other phases only.
 */

const MAX_EXAMPLES = Number(process.env.FUZZ_MAX_EXAMPLES ?? 100);
const SEED = process.env.FUZZ_SEED ?? '20261123';
const RUN_TIMEOUT_MS = Number(process.env.FUZZ_TIMEOUT_MS ?? 240_000);

function schemathesisBinary(): string {
  const fromEnv = process.env.SCHEMATHESIS_BIN;
  if (fromEnv && fs.existsSync(fromEnv)) return fromEnv;
  const out = execFileSync('bash', [path.join(REPO_ROOT, 'scripts', 'ensure-schemathesis.sh')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  const bin = out.trim().split('\n').pop() ?? '';
  if (!bin || !fs.existsSync(bin)) throw new Error(`scripts/ensure-schemathesis.sh printed no usable binary: ${JSON.stringify(out)}`);
  return bin;
}

/** Runs in `cwd` (the run dir): schemathesis keeps a cache directory there, never in the checkout. */
function run(bin: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

interface Answer {
  method: string;
  path: string;
  status: number;
}

describe('schemathesis against the webhook and the poll', () => {
  let stack: Stack;
  let fixture: Awaited<ReturnType<typeof seedOwner>>;
  let bin: string;
  beforeAll(async () => {
    bin = schemathesisBinary();
    // Accepted signals only need to start in Temporal; no worker, so the fuzz run does not execute them (the door
    // does not refuse signals whose workflows wait for a worker).
    stack = await startStack({ worker: false });
    fixture = await seedOwner(stack.registry);
  });
  afterAll(async () => {
    await stack?.stop();
  });

  /** One schemathesis run; every answer it got (from the hooks' log), and its exit code and output. */
  async function fuzz(
    name: string,
    phases: string,
    pathRegex: string,
  ): Promise<{ answers: Answer[]; byStatus: Record<string, number>; code: number | null; output: string; outputFile: string }> {
    const dir = path.join(runDir(), `fuzz-${process.pid}`);
    fs.mkdirSync(dir, { recursive: true });
    const log = path.join(dir, `${name}.answers.ndjson`);
    fs.rmSync(log, { force: true });
    const started = Date.now();
    const result = await run(
      bin,
      [
        'run',
        `${stack.ingress.url}/openapi.json`,
        '--url',
        stack.ingress.url,
        '--checks',
        'not_a_server_error',
        '--include-path-regex',
        pathRegex,
        '--phases',
        phases,
        '--max-examples',
        String(MAX_EXAMPLES),
        '--seed',
        SEED,
        '--workers',
        '2',
        '--request-timeout',
        '15',
        '--no-shrink',
        '--suppress-health-check',
        'all',
        '--header',
        `Authorization: Bearer ${fixture.token}`,
      ],
      dir,
      {
        SCHEMATHESIS_HOOKS: path.join(REPO_ROOT, 'test', 'fuzz', 'schemathesis_hooks.py'),
        FUZZ_SECRET: fixture.secret,
        FUZZ_ACCOUNT: fixture.accounts[0]!.id,
        FUZZ_LOG: log,
        NO_COLOR: '1',
      },
      RUN_TIMEOUT_MS,
    );
    const outputFile = path.join(dir, `${name}.schemathesis.log`);
    fs.writeFileSync(outputFile, result.output);
    const answers = fs.existsSync(log)
      ? fs
          .readFileSync(log, 'utf8')
          .trim()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Answer)
      : [];
    const byStatus: Record<string, number> = {};
    for (const a of answers) byStatus[a.status] = (byStatus[a.status] ?? 0) + 1;
    const fivexx = answers.filter((a) => a.status >= 500).length;
    console.log(
      `[fuzz] schemathesis ${phases}: ${answers.length} requests in ${((Date.now() - started) / 1000).toFixed(0)} s, ${fivexx} 5xx; by status ${JSON.stringify(byStatus)}`,
    );
    return { answers, byStatus, code: result.code, output: result.output, outputFile };
  }

  function expectNoServerError(run: Awaited<ReturnType<typeof fuzz>>, routes: RegExp[], past: '400' | '202'): void {
    // Every operation was reached, and requests got past authentication: to validation (400), or accepted (202).
    for (const route of routes) {
      expect({ route: String(route), reached: run.answers.some((a) => route.test(a.path)) }).toEqual({ route: String(route), reached: true });
    }
    expect(run.byStatus['400'] ?? 0).toBeGreaterThan(0);
    expect(run.byStatus[past] ?? 0).toBeGreaterThan(0);
    expect(run.answers.filter((a) => a.status >= 500)).toEqual([]);
    if (run.code !== 0) {
      // Its report: the failures and errors sections first (they can be long), the summary after.
      const failures = /={5,} (?:FAILURES|ERRORS) ={5,}[\s\S]*?(?=={5,} SUMMARY)/.exec(run.output)?.[0] ?? '';
      throw new Error(`schemathesis exited ${run.code} (whole output in ${run.outputFile}):\n${failures.slice(0, 8000)}\n${run.output.slice(-3000)}`);
    }
  }

  const broadcast = /^\/webhook\/custom$/;
  const perAccount = /^\/webhook\/custom\/[^/]+$/;
  const poll = /^\/v1\/signals\/[^/]+$/;

  test(
    `when schemathesis generates up to ${MAX_EXAMPLES} requests per operation for both webhook URLs and the poll, then no answer is a 5xx`,
    async () => {
      expectNoServerError(await fuzz('fuzzing', 'examples,fuzzing', '^/(webhook/custom|v1/signals/)'), [broadcast, perAccount, poll], '202');
    },
    RUN_TIMEOUT_MS + 30_000,
  );

  test(
    'when schemathesis sends boundary and negative values of every field (coverage phase) to the per-account webhook and the poll, then no answer is a 5xx',
    async () => {
      expectNoServerError(await fuzz('coverage', 'coverage', '^/(webhook/custom/|v1/signals/)'), [perAccount, poll], '400');
    },
    RUN_TIMEOUT_MS + 30_000,
  );
});
