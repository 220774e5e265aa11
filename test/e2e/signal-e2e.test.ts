import fs from 'node:fs';
import path from 'node:path';
import { readLedger, type LedgerEntry } from '../../src/paper/ledger';
import { testEnv } from '../../support/env';
import { REPO_ROOT, startRedis } from '../../support/infra';
import { ensureBuilt, httpPost as post, processLogDir, runAdminProcess, serviceEnv, startProcessStack, type ProcessStack } from '../../support/processes';
import { commandIdOf } from '../helpers/commands';
import { mt5AndCtraderOwner } from '../helpers/registry';
import { reportedStatus } from '../helpers/poll';
import { MARKET_FILL } from '../helpers/poll-items';

/**
 * The built service as separate processes over HTTP: the admin CLI imports a fresh registry, then a worker, an ingress
 * and a paper bridge (one simulated MT5 terminal, one cTrader cBot) run against the run's Temporal and Redis. Every id
 * and credential is unique to this file, so other test files may share the Redis and the Temporal server.
 */

/** How long a signal may take from its 202 to `reported` on the poll; a deadline, not a performance target. */
const REPORTED_DEADLINE_MS = 10_000;

const { tag, mt5, ctrader, secret, token, doc: registryDoc } = mt5AndCtraderOwner('e2e');

/** The lines of a command that placed an order: a market fill or a pending placement. */
const ordersOf = (ledger: LedgerEntry[], commandId: string) => ledger.filter((l) => l.commandId === commandId && (l.op === 'open' || l.op === 'place'));

describe('a signal through the built processes (admin CLI, worker, ingress, paper bridge) over HTTP', () => {
  let dir: string;
  let registryFile: string;
  let ledgerFile: string;
  let stack: ProcessStack | undefined;
  const latencies: { what: string; ms: number }[] = [];

  beforeAll(async () => {
    ensureBuilt();
    dir = path.join(processLogDir(), `e2e-${tag}`);
    fs.mkdirSync(dir, { recursive: true });
    registryFile = path.join(dir, 'registry.json');
    ledgerFile = path.join(dir, 'ledger.jsonl');
    fs.writeFileSync(registryFile, JSON.stringify(registryDoc, null, 2), { mode: 0o600 });

    const imported = await runAdminProcess(['import', registryFile, '--json'], serviceEnv());
    if (imported.code !== 0) throw new Error(`admin import exited ${imported.code}: ${imported.stderr}`);
    expect(JSON.parse(imported.stdout)).toEqual({ accounts: 2, secrets: 1, tokens: 1 });

    stack = await startProcessStack({ registryFile, ledgerFile });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    if (latencies.length > 0) {
      console.log(`[e2e] 202 → reported, as the status poll sees it:\n${latencies.map((l) => `  ${l.what}: ${l.ms} ms`).join('\n')}`);
    }
  });

  const url = () => stack!.ingress.url;

  /** Polls until `count` accounts are reported (deadline REPORTED_DEADLINE_MS from the 202); records the latency. */
  async function untilReported(what: string, signalId: string, acceptedAt: number, count: number) {
    const body = await reportedStatus(url, token, signalId, {
      count,
      deadlineMs: REPORTED_DEADLINE_MS - (Date.now() - acceptedAt),
      intervalMs: 25,
      describe: () =>
        stack!
          .all()
          .map((p) => p.describe())
          .join('\n'),
    });
    latencies.push({ what, ms: Date.now() - acceptedAt });
    return body;
  }

  test('when the registry is imported and the processes started, then each is running and the bridge said hello for both accounts', () => {
    for (const p of stack!.all()) expect(p.running).toBe(true);
    const hellos = stack!.bridge.jsonLines('stderr').filter((l) => l.event === 'hello');
    expect([...new Set(hellos.map((h) => h.serverAccountId))].sort()).toEqual([ctrader, mt5].sort());
  });

  test('when a buy is POSTed to the mt5 account URL, then the poll shows it filled with a ticket and the ledger holds exactly one order with that ticket', async () => {
    const res = await post(`${url()}/webhook/custom/${mt5}`, { secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
    const acceptedAt = Date.now();
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ success: true, signalId: expect.stringMatching(/^sig_/), accountsResolved: 1 });
    const signalId: string = res.body.signalId;

    const status = await untilReported('buy on mt5', signalId, acceptedAt, 1);
    expect(status).toEqual({
      signalId,
      status: 'reported',
      reported: 1,
      accounts: [{ accountId: mt5, outcome: 'filled', ticket: expect.stringMatching(/^\d+$/), reason: null, occurredAt: expect.any(String), ...MARKET_FILL }],
    });
    const ticket = status.accounts[0]!.ticket;

    const orders = ordersOf(readLedger(ledgerFile), commandIdOf(signalId, mt5));
    expect(orders).toEqual([expect.objectContaining({ accountId: mt5, op: 'open', ticket, symbol: 'EURUSD', side: 'buy', volume: 0.1 })]);
    // The bridge's stdout has the handled command too.
    expect(stack!.bridge.commands().filter((c) => c.commandId === commandIdOf(signalId, mt5))).toEqual([
      expect.objectContaining({ accountId: mt5, action: 'buy', status: 'filled', ticket, replayed: false }),
    ]);
  });

  test('when a sell is broadcast, then it reaches both accounts: both filled, and the ledger has exactly one order per account', async () => {
    const res = await post(`${url()}/webhook/custom`, { secret, action: 'sell', symbol: 'GBPUSD', volume: 0.2 });
    const acceptedAt = Date.now();
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ success: true, accountsResolved: 2 });
    const signalId: string = res.body.signalId;

    const status = await untilReported('broadcast sell on mt5 + ctrader', signalId, acceptedAt, 2);
    expect(status.status).toBe('reported');
    const byAccount = Object.fromEntries(status.accounts.map((a) => [a.accountId, a]));
    expect(Object.keys(byAccount).sort()).toEqual([ctrader, mt5].sort());
    const ledger = readLedger(ledgerFile);
    for (const accountId of [mt5, ctrader]) {
      expect(byAccount[accountId]).toEqual({
        accountId,
        outcome: 'filled',
        ticket: expect.stringMatching(/^\d+$/),
        reason: null,
        occurredAt: expect.any(String),
        ...MARKET_FILL,
      });
      expect(ordersOf(ledger, commandIdOf(signalId, accountId))).toEqual([
        expect.objectContaining({ accountId, op: 'open', ticket: byAccount[accountId]!.ticket, symbol: 'GBPUSD', side: 'sell', volume: 0.2 }),
      ]);
    }
    // Nothing else of this signal in the ledger.
    expect(ledger.filter((l) => typeof l.commandId === 'string' && l.commandId.startsWith(`signal/${signalId}/`))).toHaveLength(2);
  });

  test('when a buy carries an sl above the price, then both brokers refuse it: mt5 broker:10016, ctrader broker:TRADING_BAD_STOPS, and nothing is in the ledger', async () => {
    // EURUSD sits around 1.085 on paper; a buy's stop loss must be below the bid.
    const res = await post(`${url()}/webhook/custom`, { secret, action: 'buy', symbol: 'EURUSD', volume: 0.1, sl: 1.2 });
    const acceptedAt = Date.now();
    expect(res.status).toBe(202);
    expect(res.body.accountsResolved).toBe(2);
    const signalId: string = res.body.signalId;

    const status = await untilReported('rejected buy on mt5 + ctrader', signalId, acceptedAt, 2);
    const byAccount = Object.fromEntries(status.accounts.map((a: { accountId: string }) => [a.accountId, a]));
    expect(byAccount[mt5]).toEqual({
      accountId: mt5,
      outcome: 'rejected',
      ticket: null,
      reason: expect.stringMatching(/^broker:10016 /),
      occurredAt: expect.any(String),
    });
    expect(byAccount[ctrader]).toEqual({
      accountId: ctrader,
      outcome: 'rejected',
      ticket: null,
      reason: expect.stringMatching(/^broker:TRADING_BAD_STOPS /),
      occurredAt: expect.any(String),
    });
    expect(readLedger(ledgerFile).filter((l) => typeof l.commandId === 'string' && l.commandId.startsWith(`signal/${signalId}/`))).toEqual([]);
  });

  test('when the processes get SIGTERM, then each exits 0 by itself within the grace period', async () => {
    const exits = await stack!.stop(10_000);
    for (const [name, exit] of Object.entries(exits)) {
      expect({ name, ...exit }).toEqual({ name, code: 0, signal: null });
    }
    for (const p of stack!.all()) expect(p.running).toBe(false);
  });
});

const demoRegistry = path.join(REPO_ROOT, 'demo', 'registry.json');

describe('the demo registry', () => {
  (fs.existsSync(demoRegistry) ? test : test.skip)(
    'when demo/registry.json is imported with the admin CLI into a Redis of its own, then it validates and imports both accounts',
    async () => {
      ensureBuilt();
      // Its ids and credentials are fixed, so it goes into a private redis-server, never the run's shared one.
      const redis = await startRedis();
      try {
        const run = await runAdminProcess(['import', demoRegistry, '--json'], { ...serviceEnv(), REDIS_URL: redis.url });
        expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
        expect(JSON.parse(run.stdout)).toEqual({ accounts: 2, secrets: 1, tokens: 1 });
        expect(testEnv().redisUrl).not.toBe(redis.url);
      } finally {
        await redis.stop();
      }
    },
  );
});
