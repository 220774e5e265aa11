/**
 * The owner signal log's list query with many signals in the store (issue 16): a fresh Temporal dev server (the
 * project's profile) and Redis, SIGNALS signals of one owner and SIGNALS/5 of another started directly through the
 * client as their workflows would be (a parent and one account workflow each, with the search attributes and memo the
 * service sets; no worker), then each query timed REPEAT times. Most close within seconds (a workflow execution
 * timeout stands in for the worker), a tenth stay running, as signals waiting for their bridge would.
 *
 *   npm run build && node dist/bench/signal-log.js            # SIGNALS=10000 REPEAT=15 by default
 *
 * With SIGNAL_LOG_BENCH_DB=<file> the store is kept there (and what was seeded beside it, <file>.json): a second run
 * measures the same store again without seeding it (10 minutes on 2 busy cores).
 */
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { Client, Connection } from '@temporalio/client';
import { startRedis, startTemporal, REPO_ROOT } from '../support/infra';
import { Regions } from '../src/temporal/regions';
import { TemporalAccountRuns } from '../src/temporal/account-runs';
import { RedisReportedOutcomes } from '../src/signals/reported-outcomes';
import { RedisCommandQueue } from '../src/bridge/queue';
import { signalLog, type SignalLog } from '../src/signals/log';
import { accountWorkflowId, OUTCOME_MEMO_PREFIX, signalWorkflowId } from '../src/domain/ids';
import {
  AccountIdKey,
  AccountIdsKey,
  ActionKey,
  OutcomeKey,
  OwnerIdKey,
  ReasonKey,
  ReceivedAtKey,
  SignalIdKey,
  SymbolKey,
} from '../src/temporal/search-attributes';

const SIGNALS = Number(process.env.SIGNALS ?? 10_000);
const REPEAT = Number(process.env.REPEAT ?? 15);
const CONCURRENCY = 32;
const NOBODY = 'signal-log-bench-no-worker';
const SYMBOLS = ['EURUSD', 'GBPUSD', 'USDJPY', 'XAUUSD'];
const ACTIONS = ['buy', 'sell', 'close'];

interface Seeded {
  owner: string;
  accounts: string[];
  signalIds: string[];
  receivedAt: number[];
}

async function seed(client: Client, owner: string, count: number): Promise<Seeded> {
  const accounts = Array.from({ length: 5 }, (_, i) => `acc-${owner}-${i}`);
  const out: Seeded = { owner, accounts, signalIds: [], receivedAt: [] };
  let next = 0;
  const one = async (i: number) => {
    const signalId = `sig_${randomBytes(16).toString('hex')}`;
    const accountId = accounts[i % accounts.length]!;
    const action = ACTIONS[i % ACTIONS.length]!;
    const symbol = action === 'close' ? undefined : SYMBOLS[i % SYMBOLS.length];
    const running = i % 10 === 0;
    const outcome = running ? undefined : i % 5 === 1 ? 'rejected' : action === 'close' ? 'done' : 'filled';
    const receivedAt = new Date();
    const common = [
      { key: SignalIdKey, value: signalId },
      { key: ActionKey, value: action },
      ...(symbol ? [{ key: SymbolKey, value: symbol }] : []),
      { key: OwnerIdKey, value: owner },
      { key: ReceivedAtKey, value: receivedAt },
    ];
    // Closed within seconds, as a filled or rejected signal is; the running tenth waits as for its bridge.
    const timeout = running ? {} : { workflowExecutionTimeout: '2s' as const };
    await client.workflow.start('signalWorkflow', {
      taskQueue: NOBODY,
      workflowId: signalWorkflowId(signalId),
      ...timeout,
      memo: outcome
        ? {
            [OUTCOME_MEMO_PREFIX + accountId]: {
              accountId,
              outcome,
              ticket: outcome === 'rejected' ? null : String(i),
              reason: outcome === 'rejected' ? 'risk_symbol' : null,
              occurredAt: receivedAt.toISOString(),
            },
          }
        : {},
      typedSearchAttributes: [...common, { key: AccountIdsKey, value: [accountId] }],
    });
    await client.workflow.start('accountWorkflow', {
      taskQueue: NOBODY,
      workflowId: accountWorkflowId(signalId, accountId),
      ...timeout,
      typedSearchAttributes: [
        ...common,
        { key: AccountIdKey, value: accountId },
        ...(outcome ? [{ key: OutcomeKey, value: outcome }] : []),
        ...(outcome === 'rejected' ? [{ key: ReasonKey, value: 'risk_symbol' }] : []),
      ],
    });
    out.signalIds[i] = signalId;
    out.receivedAt[i] = receivedAt.getTime();
  };
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < count; i = next++) await one(i);
    }),
  );
  return out;
}

function stats(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  return { median: Math.round(at(0.5) * 10) / 10, p95: Math.round(at(0.95) * 10) / 10, max: Math.round(sorted.at(-1)! * 10) / 10 };
}

async function timed(name: string, run: () => Promise<number>, results: Record<string, unknown>) {
  const ms: number[] = [];
  let rows = 0;
  for (let i = 0; i < REPEAT; i++) {
    const t0 = performance.now();
    rows = await run();
    ms.push(performance.now() - t0);
  }
  results[name] = { ...stats(ms), rows };
  process.stdout.write(`${name.padEnd(46)} ${JSON.stringify(results[name])}\n`);
}

async function main() {
  const keep = process.env.SIGNAL_LOG_BENCH_DB;
  const reuse = keep !== undefined && fs.existsSync(keep) && fs.existsSync(`${keep}.json`);
  const temporal = await startTemporal(keep ? { dbFile: keep } : {});
  const redisServer = await startRedis();
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  const regions = new Regions([{ name: 'default', address: temporal.address, namespace: 'default' }], 60_000);
  const redis = new Redis(redisServer.url);
  try {
    const t0 = Date.now();
    const { a, b } = reuse
      ? (JSON.parse(fs.readFileSync(`${keep}.json`, 'utf8')) as { a: Seeded; b: Seeded })
      : {
          a: await seed(client, `owner-a-${randomBytes(3).toString('hex')}`, SIGNALS),
          b: await seed(client, `owner-b-${randomBytes(3).toString('hex')}`, Math.ceil(SIGNALS / 5)),
        };
    if (keep && !reuse) fs.writeFileSync(`${keep}.json`, JSON.stringify({ a, b }));
    const seedMs = Date.now() - t0;
    process.stdout.write(
      `${reuse ? 'reused' : 'seeded'} ${a.signalIds.length} + ${b.signalIds.length} signals (2 workflows each) in ${(seedMs / 1000).toFixed(1)} s\n`,
    );
    const registry = { getAccount: (id: string) => Promise.resolve(a.accounts.includes(id) ? ({ id, owner: a.owner } as never) : null) };
    const log: SignalLog = signalLog({
      runs: new TemporalAccountRuns(regions),
      registry,
      reported: new RedisReportedOutcomes(redis, 3600),
      deliveries: new RedisCommandQueue(redis),
    });
    // Visibility catches up with the starts and the timeouts: wait until the store holds them all, closed ones closed.
    const total = (a.signalIds.length + b.signalIds.length) * 2;
    for (;;) {
      const { count } = await client.workflow.count();
      const { count: running } = await client.workflow.count(`ExecutionStatus = 'Running'`);
      if (count >= total && running <= Math.ceil(total / 10) + 2) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const results: Record<string, unknown> = {};
    const list = (query: Record<string, unknown>) => async () => (await log.list(a.owner, query)).signals.length;
    await timed('first page, 25, no filter', list({}), results);
    await timed('first page, 100, no filter', list({ pageSize: 100 }), results);
    await timed(
      'pages 1 to 5 of 25, in turn (the five together)',
      async () => {
        let token: string | undefined;
        let rows = 0;
        for (let page = 0; page < 5; page++) {
          const res = await log.list(a.owner, { pageSize: 25, ...(token ? { pageToken: token } : {}) });
          rows = res.signals.length;
          token = res.nextPageToken;
        }
        return rows;
      },
      results,
    );
    await timed('action = sell', list({ action: 'sell' }), results);
    await timed('one account of five', list({ accountId: a.accounts[2] }), results);
    await timed('outcome = rejected', list({ outcome: 'rejected' }), results);
    const mid = a.receivedAt[Math.floor(a.signalIds.length / 2)]!;
    await timed('received in a window in the middle', list({ from: new Date(mid - 2000).toISOString(), to: new Date(mid).toISOString() }), results);
    // Where a page's time goes: one visibility request of the kind a page makes, alone.
    const raw = (query: string, pageSize: number) => async () => {
      const res = await connection.workflowService.listWorkflowExecutions({ namespace: 'default', query, pageSize });
      return res.executions.length;
    };
    const ownerA = `WorkflowType = 'accountWorkflow' AND OwnerId = '${a.owner}'`;
    await timed('raw: one visibility request, closed, 500 rows', raw(`${ownerA} AND ExecutionStatus != 'Running'`, 500), results);
    await timed('raw: one visibility request, closed, 50 rows', raw(`${ownerA} AND ExecutionStatus != 'Running'`, 50), results);
    await timed('raw: one visibility request, running, 50 rows', raw(`${ownerA} AND ExecutionStatus = 'Running'`, 50), results);
    const cursor = new Date(mid).toISOString();
    await timed(
      'raw: closed, 50 rows, older than a cursor',
      raw(`${ownerA} AND (ReceivedAt < '${cursor}' OR (ReceivedAt = '${cursor}' AND SignalId < 'sig_0')) AND ExecutionStatus != 'Running'`, 50),
      results,
    );
    await timed('raw: closed, 50 rows, ReceivedAt <= a cursor', raw(`${ownerA} AND ReceivedAt <= '${cursor}' AND ExecutionStatus != 'Running'`, 50), results);
    await timed('detail of one signal', async () => (await log.detail(a.owner, a.signalIds[Math.floor(a.signalIds.length / 3)]!)).accounts.length, results);
    const file = path.join(REPO_ROOT, 'bench', 'results', `signal-log-${new Date().toISOString().replace(/[:]/g, '-')}.json`);
    fs.writeFileSync(
      file,
      `${JSON.stringify({ signals: a.signalIds.length, otherOwner: b.signalIds.length, repeat: REPEAT, seedMs, reused: reuse, results }, null, 2)}\n`,
    );
    process.stdout.write(`results: ${path.relative(REPO_ROOT, file)}\n`);
  } finally {
    redis.disconnect();
    await regions.close();
    await connection.close();
    await temporal.stop();
    await redisServer.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err instanceof Error ? err.stack : err)}\n`);
  process.exit(1);
});
