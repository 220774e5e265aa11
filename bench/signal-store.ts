/**
 * A store holding many signals (issue 16), shared by the signal-log and dashboard-page benches: a fresh Temporal dev
 * server (the project's profile) and Redis, SIGNALS signals of one owner and SIGNALS/5 of another started directly
 * through the client as their workflows would be (a parent and one account workflow each, with the search attributes
 * and memo the service sets; no worker). Most close within seconds (a workflow execution timeout stands in for the
 * worker), a tenth stay running, as signals waiting for their bridge would.
 *
 * With SIGNAL_LOG_BENCH_DB=<file> the store is kept there (and what was seeded beside it, <file>.json): a later run
 * measures the same store again without seeding it (seeding takes about 8 minutes on 2 busy cores).
 */
import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { startRedis, startTemporal, type RedisServer, type TemporalServer } from '../support/infra';
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
import { accountWorkflow } from '../workflows/account';
import { signalWorkflow } from '../workflows/signal';

const CONCURRENCY = 32;
const NOBODY = 'signal-log-bench-no-worker';
const SYMBOLS = ['EURUSD', 'GBPUSD', 'USDJPY', 'XAUUSD'];
const ACTIONS = ['buy', 'sell', 'close'];

export interface Seeded {
  owner: string;
  accounts: string[];
  signalIds: string[];
  receivedAt: number[];
}

export interface SignalStore {
  temporal: TemporalServer;
  redisServer: RedisServer;
  connection: Connection;
  client: Client;
  /** The owner with SIGNALS signals, and the other one. */
  a: Seeded;
  b: Seeded;
  seedMs: number;
  reused: boolean;
  stop(): Promise<void>;
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
    // Closed within seconds, as a filled or rejected signal is; the running tenth waits as for its bridge. Started by
    // name with no input on a queue no worker polls: only their visibility records matter here.
    const timeout = running ? {} : { workflowExecutionTimeout: '2s' as const };
    await client.workflow.start(signalWorkflow.name, {
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
    await client.workflow.start(accountWorkflow.name, {
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

/** Starts Temporal (on the kept file when there is one) and Redis, seeds or reuses, and waits for visibility. */
export async function openSignalStore(signals: number, log: (line: string) => void): Promise<SignalStore> {
  const keep = process.env.SIGNAL_LOG_BENCH_DB;
  const reused = keep !== undefined && fs.existsSync(keep) && fs.existsSync(`${keep}.json`);
  const temporal = await startTemporal(keep ? { dbFile: keep } : {});
  const redisServer = await startRedis();
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  const stop = async () => {
    await connection.close();
    await temporal.stop();
    await redisServer.stop();
  };
  try {
    const t0 = Date.now();
    const { a, b } = reused
      ? (JSON.parse(fs.readFileSync(`${keep}.json`, 'utf8')) as { a: Seeded; b: Seeded })
      : {
          a: await seed(client, `owner-a-${randomBytes(3).toString('hex')}`, signals),
          b: await seed(client, `owner-b-${randomBytes(3).toString('hex')}`, Math.ceil(signals / 5)),
        };
    if (keep && !reused) fs.writeFileSync(`${keep}.json`, JSON.stringify({ a, b }));
    const seedMs = Date.now() - t0;
    log(`${reused ? 'reused' : 'seeded'} ${a.signalIds.length} + ${b.signalIds.length} signals (2 workflows each) in ${(seedMs / 1000).toFixed(1)} s`);
    // Visibility catches up with the starts and the timeouts: wait until the store holds them all, closed ones closed.
    const total = (a.signalIds.length + b.signalIds.length) * 2;
    for (;;) {
      const { count } = await client.workflow.count();
      const { count: running } = await client.workflow.count(`ExecutionStatus = 'Running'`);
      if (count >= total && running <= Math.ceil(total / 10) + 2) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    return { temporal, redisServer, connection, client, a, b, seedMs, reused, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
