/**
 * The owner signal log's list query with many signals in the store (issue 16): the store of bench/signal-store.ts
 * (SIGNALS signals of one owner, SIGNALS/5 of another), then each query timed REPEAT times.
 *
 *   npm run build && node dist/bench/signal-log.js            # SIGNALS=10000 REPEAT=15 by default
 *
 * SIGNAL_LOG_BENCH_DB=<file> keeps the store for the next run (bench/signal-store.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { REPO_ROOT } from '../support/infra';
import { Regions } from '../src/temporal/regions';
import { TemporalAccountRuns } from '../src/temporal/temporal-account-runs';
import { RedisReportedOutcomes } from '../src/signals/reported-outcomes';
import { signalLog, type SignalLog } from '../src/signals/log';
import { openSignalStore } from './signal-store';
import { medianP95 } from './stats';
import { accountWorkflow } from '../workflows/account';
import { commandQueue } from '../support/commands';

const SIGNALS = Number(process.env.SIGNALS ?? 10_000);
const REPEAT = Number(process.env.REPEAT ?? 15);

async function timed(name: string, run: () => Promise<number>, results: Record<string, unknown>) {
  const ms: number[] = [];
  let rows = 0;
  for (let i = 0; i < REPEAT; i++) {
    const t0 = performance.now();
    rows = await run();
    ms.push(performance.now() - t0);
  }
  results[name] = { ...medianP95(ms), rows };
  process.stdout.write(`${name.padEnd(46)} ${JSON.stringify(results[name])}\n`);
}

async function main() {
  const store = await openSignalStore(SIGNALS, (line) => process.stdout.write(`${line}\n`));
  const { temporal, connection, a, b, seedMs, reused } = store;
  const regions = new Regions([{ name: 'default', address: temporal.address, namespace: 'default' }], 60_000);
  const redis = new Redis(store.redisServer.url);
  try {
    const registry = { getAccount: (id: string) => Promise.resolve(a.accounts.includes(id) ? ({ id, owner: a.owner } as never) : null) };
    const log: SignalLog = signalLog({
      runs: new TemporalAccountRuns(regions),
      registry,
      reported: new RedisReportedOutcomes(redis, 3600),
      deliveries: commandQueue(redis),
    });
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
    const ownerA = `WorkflowType = '${accountWorkflow.name}' AND OwnerId = '${a.owner}'`;
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
      `${JSON.stringify({ signals: a.signalIds.length, otherOwner: b.signalIds.length, repeat: REPEAT, seedMs, reused, results }, null, 2)}\n`,
    );
    process.stdout.write(`results: ${path.relative(REPO_ROOT, file)}\n`);
  } finally {
    redis.disconnect();
    await regions.close();
    await store.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err instanceof Error ? err.stack : err)}\n`);
  process.exit(1);
});
