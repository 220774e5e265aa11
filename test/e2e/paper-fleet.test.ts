import fs from 'node:fs';
import path from 'node:path';
import { RedisLastSeen, ONLINE_WITHIN_MS } from '../../src/bridge/presence';
import { INGRESS_CONNECTIONS } from '../../src/bridge-kit/fleet';
import { testEnv } from '../../support/env';
import { ensureBuilt, startPaperBridgeProcess, type PaperBridgeProcess } from '../../support/processes';
import { waitFor } from '../../support/run';
import { ordersByCommand } from '../fault/ledger';
import { commandIdOf } from '../helpers/commands';
import { connectionsTo } from '../../support/sockets';
import { pollUntilReported, post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';

/**
 * One paper bridge process serving many accounts through multi-account sessions (protocol 1.7) against the real
 * stack: every account online, a buy to each filled exactly once, a handful of connections from the process to the
 * ingress whatever the number of accounts, and a restart (SIGKILL mid-burst) that loses and doubles nothing. The
 * ingress caps an address at 64 connections here: one loop per account (200 long-polls) could not stay under it.
 * PAPER_FLEET_ACCOUNTS sets the number of accounts (1,000 for the measurement in docs/paper-bridge.md).
 */
const ACCOUNTS = Number(process.env.PAPER_FLEET_ACCOUNTS ?? 200);
/** What the process may hold: the fleet's connections to the ingress, whatever the accounts. */
const MAX_CONNECTIONS = INGRESS_CONNECTIONS;
// Each burst is ACCOUNTS signals through Temporal on a shared two-core machine: a minute or more.
jest.setTimeout(300_000);

describe(`one paper bridge process for ${ACCOUNTS} accounts`, () => {
  let stack: Stack;
  let f: Fixture;
  let bridge: PaperBridgeProcess | undefined;
  let ledgerFile: string;
  const port = () => Number(new URL(stack.ingress.url).port);
  /** The most connections the process was seen to hold to the ingress. */
  let mostConnections = 0;
  const sample = () => {
    const n = connectionsTo(bridge!.pid, port());
    mostConnections = Math.max(mostConnections, n);
    return n;
  };

  beforeAll(async () => {
    ensureBuilt();
    stack = await startStack({ env: { MAX_CONNECTIONS_PER_IP: '64', BRIDGE_MAX_WAIT_MS: '5000' } });
    f = await seedOwner(
      stack.registry,
      Array.from({ length: ACCOUNTS }, () => ({})),
    );
    const dir = fs.mkdtempSync(path.join(testEnv().runDir, 'paper-fleet-'));
    ledgerFile = path.join(dir, 'ledger.jsonl');
    const registryFile = path.join(dir, 'registry.json');
    fs.writeFileSync(registryFile, JSON.stringify({ accounts: f.accounts.map((a) => ({ ...a, platform: 'mt5' })) }), { mode: 0o600 });
    const startedAt = Date.now();
    bridge = await startPaperBridgeProcess({
      registryFile,
      ledgerFile,
      ingressUrl: stack.ingress.url,
      extraArgs: ['--tick-ms', '0', '--wait-ms', '5000'],
      readyTimeoutMs: 120_000,
      label: 'paper-fleet',
    });
    process.stderr.write(`paper fleet: ${ACCOUNTS} accounts said hello in ${Date.now() - startedAt} ms\n`);
  });
  afterAll(async () => {
    await bridge?.stop();
    await stack?.stop();
  });

  /** `run` over every account, `lanes` at a time; the results in the accounts' order. */
  const eachAccount = async <T>(lanes: number, run: (a: Fixture['accounts'][number]) => Promise<T>): Promise<T[]> => {
    const out: T[] = [];
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < f.accounts.length; i = next++) out[i] = await run(f.accounts[i]!);
    };
    await Promise.all(Array.from({ length: lanes }, lane));
    return out;
  };

  const buyEach = () =>
    eachAccount(8, async (a) => {
      const res = await post(`${stack.ingress.url}/webhook/custom/${a.id}`, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1 });
      expect(res.status).toBe(202);
      const signalId = String(res.body.signalId);
      return { signalId, commandId: commandIdOf(signalId, a.id) };
    });

  /** Each command ordered exactly once in the ledger, and each signal reported filled with that order's ticket. */
  const filledOnce = async (sent: { signalId: string; commandId: string }[]) => {
    const orders = await waitFor(
      `an order for each of ${sent.length} commands in the ledger`,
      async () => {
        sample();
        const byCommand = ordersByCommand(ledgerFile);
        return sent.every((s) => byCommand.has(s.commandId)) ? byCommand : undefined;
      },
      120_000,
      200,
    );
    expect(sent.filter((s) => orders.get(s.commandId)!.length !== 1).map((s) => s.commandId)).toEqual([]);
    const statuses = await eachAccount(8, async (a) => {
      const s = sent[f.accounts.indexOf(a)]!;
      sample();
      return (await pollUntilReported(stack.ingress.url, s.signalId, f.token, 1, 60_000)).accounts[0];
    });
    statuses.forEach((status, i) =>
      expect(status).toMatchObject({ accountId: f.accounts[i]!.id, outcome: 'filled', ticket: String(orders.get(sent[i]!.commandId)![0]!.ticket) }),
    );
  };

  it('keeps every account online on a handful of connections', async () => {
    const seen = new RedisLastSeen(stack.redis);
    const accounts = f.accounts.map((a) => ({ id: a.id, owner: f.owner }));
    await waitFor(
      'every account seen within the online window',
      async () => {
        const times = await seen.lastSeen(accounts);
        const now = Date.now();
        return times.every((t) => t !== undefined && now - t.getTime() <= ONLINE_WITHIN_MS) || undefined;
      },
      30_000,
      200,
    );
    const hellos = bridge!.jsonLines('stderr').filter((l) => l.event === 'hello');
    expect(new Set(hellos.map((l) => l.accountId)).size).toBe(ACCOUNTS);
    expect(sample()).toBeGreaterThan(0);
    expect(mostConnections).toBeLessThanOrEqual(MAX_CONNECTIONS);
  });

  it('fills a buy on each account exactly once, on a handful of connections', async () => {
    await filledOnce(await buyEach());
    expect(mostConnections).toBeLessThanOrEqual(MAX_CONNECTIONS);
    process.stderr.write(`paper fleet: at most ${mostConnections} connections to the ingress\n`);
  });

  it('loses and doubles nothing across a SIGKILL and a restart mid-burst', async () => {
    const sending = buyEach();
    // Killed once part of the burst is ordered (and, with the rest still arriving, part is not).
    const before = bridge!.commands().length;
    await waitFor('part of the burst handled', async () => bridge!.commands().length - before >= ACCOUNTS / 10 || undefined, 60_000, 20);
    await bridge!.kill9();
    const sent = await sending;
    await bridge!.restart();
    await filledOnce(sent);
    expect(mostConnections).toBeLessThanOrEqual(MAX_CONNECTIONS);
  });
});
