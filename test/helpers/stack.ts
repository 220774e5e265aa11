import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { openRedis } from '../../src/redis';
import { loadConfig, type Config } from '../../src/config';
import { startIngress, type Ingress, type IngressSeams } from '../../src/server';
import { startWorker, type RunningWorker } from '../../src/worker';
import { RedisRegistry } from '../../src/registry/registry';
import { importRegistry } from '../../src/registry/import';
import type { ImportDocument } from '../../src/domain/account';
import { testEnv } from '../../support/env';
import { REPO_ROOT, waitFor } from '../../support/infra';
import { post } from '../../support/http';
import { ScriptedTerminal } from './terminal';
import { ownerDocument } from './registry';
import { reportedStatus } from './poll';
import { ManualFeed } from '../../src/paper/broker';
import { PaperTerminal, type TerminalOptions } from '../../src/paper/terminal';

/**
 * The real service in-process: ingress and worker against the run's real Temporal and Redis. Each test file gets its
 * own task queue, so its worker runs only its own workflows.
 */
export function testConfig(env: Record<string, string> = {}, tuning: Tuning = {}): Config {
  const t = testEnv();
  const config = loadConfig({
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    REDIS_URL: t.redisUrl,
    TEMPORAL_ADDRESS: t.temporalAddress,
    TEMPORAL_NAMESPACE: t.temporalNamespace,
    TEMPORAL_TASK_QUEUE: `test-${path.basename(expect.getState().testPath ?? 'x', '.test.ts')}-${randomBytes(3).toString('hex')}`,
    // Tests share one Redis and poll in loops: each stack counts on its own, with room to spare, unless a test sets limits.
    RATE_LIMIT_KEY_PREFIX: `t${randomBytes(4).toString('hex')}:`,
    RATE_LIMIT_SCALE: '1000',
    WEBHOOK_PREAUTH_IP_MAX: '100000',
    // Parallel test files share one dev server on two cores: a healthy call can take over a second here.
    TEMPORAL_START_TIMEOUT_MS: '5000',
    WORKER_METRICS_PORT: '0',
    ADMIN_PORT: '0',
    ...env,
  });
  // The worker runs from src/ here, not beside the bundle `npm run build` writes.
  return tuned(config, { temporal: { workflowBundlePath: path.join(REPO_ROOT, 'dist', 'workflow-bundle.js') } }, tuning);
}

/**
 * Internal tuning a test changes on the Config it starts, to make a situation happen quickly (a short body timeout, a
 * limit of 3): never through the environment, where these are not settings. The real values are the constants the
 * Config is built from (src/config.ts names each); a test says why it changes one.
 */
export type Tuning = { [K in keyof Config]?: Config[K] extends object | undefined ? DeepPartial<NonNullable<Config[K]>> : Config[K] };
type DeepPartial<T> = T extends readonly unknown[] ? T : T extends object ? { [K in keyof T]?: DeepPartial<T[K]> } : T;

function tuned(config: Config, ...tunings: Tuning[]): Config {
  const merge = (base: unknown, over: unknown): unknown => {
    if (over === undefined) return base;
    if (typeof base !== 'object' || base === null || Array.isArray(base) || typeof over !== 'object' || over === null || Array.isArray(over)) return over;
    const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
    for (const [k, v] of Object.entries(over)) out[k] = merge(out[k], v);
    return out;
  };
  return tunings.reduce<Config>((c, t) => merge(c, t) as Config, config);
}

export interface Stack {
  config: Config;
  ingress: Ingress;
  worker?: RunningWorker;
  redis: Redis;
  registry: RedisRegistry;
  stop(): Promise<void>;
}

export async function startStack(options: { env?: Record<string, string>; tuning?: Tuning; worker?: boolean; seams?: IngressSeams } = {}): Promise<Stack> {
  const config = testConfig(options.env, options.tuning);
  const worker = options.worker === false ? undefined : await startWorker(config);
  const ingress = await startIngress(config, options.seams);
  const redis = openRedis(config.redis, {});
  return {
    config,
    ingress,
    worker,
    redis,
    registry: new RedisRegistry(redis),
    async stop() {
      await ingress.close();
      await worker?.shutdown();
      redis.disconnect();
    },
  };
}

/** A fresh owner with accounts, one secret linking them and one token granting them; ids unique to the test. */
export interface Fixture {
  owner: string;
  secret: string;
  token: string;
  accounts: { id: string; bridgeToken: string }[];
  doc: ImportDocument;
}

export type AccountSpec = Partial<ImportDocument['accounts'][number]>;

export async function seedOwner(registry: RedisRegistry, specs: AccountSpec[] = [{}]): Promise<Fixture> {
  const tag = randomBytes(4).toString('hex');
  // The one registry builder (test/helpers/registry.ts); these accounts are MT5 at bridge 2.0.0 unless a spec says.
  const built = ownerDocument(
    `owner-${tag}`,
    specs.map((spec, i) => ({ id: `acc-${tag}-${i}`, platform: 'mt5' as const, bridgeVersion: '2.0.0', ...spec })),
  );
  const doc = built.doc as unknown as ImportDocument;
  await importRegistry(registry, doc);
  return { owner: built.owner, secret: built.secret, token: built.token, accounts: built.accounts.map((a) => ({ id: a.id, bridgeToken: a.bridgeToken })), doc };
}

export { get, post } from '../../support/http';

/** Polls GET /v1/signals/:id until `count` accounts are reported (the one poll helper, test/helpers/poll.ts). */
// The body as the tests read it: a JSON answer, checked by their assertions (as `get` gives it).
export function pollUntilReported(ingressUrl: string, signalId: string, token: string, count = 1, timeoutMs = 15_000): Promise<any> {
  return reportedStatus(ingressUrl, token, signalId, { count, deadlineMs: timeoutMs });
}

/**
 * The whole path once, as a caller and a bridge would: a fresh owner and account, the bridge says hello, a buy is
 * POSTed (202), the bridge takes the command and reports it filled with `ticket`; returns the poll's answer.
 */
export async function buyAndFill(stack: Stack, ticket: string, timeoutMs = 15_000) {
  const f = await seedOwner(stack.registry);
  const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
  await terminal.hello();
  const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
  expect(res.status).toBe(202);
  const [command] = await terminal.nextCommands(1, timeoutMs);
  await terminal.report([{ commandId: command!.commandId, status: 'filled', ticket }]);
  return pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, timeoutMs);
}

/**
 * The paper bridge in this process for one account of `f`, on a manual feed (EURUSD 1.08000/1.08010) and a USD
 * balance of 10,000, started and said hello. The caller stops it.
 */
export async function startPaperTerminal(stack: Stack, account: { id: string; bridgeToken: string }, options: Partial<TerminalOptions> = {}) {
  const feed = new ManualFeed();
  feed.set('EURUSD', 1.08, 1.0801);
  const terminal = new PaperTerminal({
    accountId: account.id,
    platform: 'mt5',
    bridgeToken: account.bridgeToken,
    ingressUrl: stack.ingress.url,
    brokerOptions: { feed, balance: 10_000 },
    waitMs: 1_000,
    tickMs: 0,
    ...options,
    log: () => undefined,
    diag: () => undefined,
  });
  terminal.start();
  await waitFor('the paper bridge to say hello', async () => terminal.stats.hellos > 0, 10_000);
  return { terminal, feed };
}
