/**
 * Records the workflow histories that test/replay/replay.test.ts replays (docs/workflow-tests.md). Not a test of its
 * own: its name does not match jest's testMatch, so `make test` never runs it, and it does nothing unless
 * RECORD_HISTORIES=1. Run it through jest, which starts the real Temporal dev server and redis-server:
 *
 *   npm run build && RECORD_HISTORIES=1 node_modules/.bin/jest --testMatch '<rootDir>/test/replay/record-histories.ts'
 *
 * It drives the real service over HTTP (ingress, worker, a scripted bridge), waits for every execution to close, and
 * writes one JSON per execution into test/replay/histories/, replacing what was there. RECORD_ONLY=f records case (f)
 * alone and replaces only its files: the others stay as the code of their day recorded them.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Client, Connection } from '@temporalio/client';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { reportedStatus } from '../helpers/poll';
import { temporalClient } from '../helpers/temporal';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { ScriptedTerminal } from '../helpers/terminal';
import { historyToJsonObject } from './history-json';
import { ownerCallbacksOf } from '../../src/callbacks/wiring';

const HISTORIES_DIR = path.join(__dirname, 'histories');

/** What one fixture file holds: the history is Temporal's JSON form of it (as `temporal workflow show -o json`). */
export interface RecordedHistory {
  /** What the run covers, for whoever reads a failing replay. */
  description: string;
  workflowType: string;
  /** Histories carry no workflow id, and accountWorkflow uses its own as the commandId: replay must get it back. */
  workflowId: string;
  history: unknown;
}

const recording = process.env.RECORD_HISTORIES === '1' ? describe : describe.skip;
const only = process.env.RECORD_ONLY;
/** One case (a) … (h); with RECORD_ONLY, only that one runs. */
const recordCase = (letter: string, name: string, fn: () => Promise<void>) => (only === undefined || only === letter ? test : test.skip)(name, fn);

recording('records the replay fixtures from the real service (RECORD_HISTORIES=1)', () => {
  let stack: Stack;
  let connection: Connection;
  let client: Client;
  const secrets: string[] = [];
  let receiver: http.Server;
  beforeAll(async () => {
    // A receiver for case (f)'s outcome callback, on loopback, which the allow-list lets callbacks reach.
    receiver = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(204).end()));
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const keyFile = path.join(fs.mkdtempSync(path.join(tmpdir(), 'replay-')), 'callback.key');
    fs.writeFileSync(keyFile, randomBytes(32).toString('base64'), { mode: 0o600 });
    stack = await startStack({
      env: {
        CALLBACK_SECRET_KEY_FILE: keyFile,
        CALLBACK_ALLOWED_ORIGINS: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`,
        CALLBACK_ALLOW_HTTP: 'true',
      },
    });
    ({ connection, client } = await temporalClient());
    fs.mkdirSync(HISTORIES_DIR, { recursive: true });
    for (const file of fs.readdirSync(HISTORIES_DIR))
      if (file.endsWith('.json') && (only === undefined || file.startsWith(`${only}-`))) fs.rmSync(path.join(HISTORIES_DIR, file));
  });
  afterAll(async () => {
    await connection?.close();
    await stack?.stop();
    receiver?.close();
  });

  const seed = async (specs?: Parameters<typeof seedOwner>[1]): Promise<Fixture> => {
    const f = await seedOwner(stack.registry, specs);
    secrets.push(f.secret, f.token, ...f.accounts.map((a) => a.bridgeToken));
    return f;
  };
  const webhook = async (f: Fixture, body: Record<string, unknown>, accountId?: string): Promise<string> => {
    const res = await post(`${stack.ingress.url}/webhook/custom${accountId ? `/${accountId}` : ''}`, { secret: f.secret, ...body });
    expect(res.status).toBe(202);
    return res.body.signalId as string;
  };

  /** Waits until the execution closed (its history is then complete), and writes it as `<name>.json`. */
  const save = async (name: string, workflowId: string, description: string) => {
    const handle = client.workflow.getHandle(workflowId);
    await handle.result();
    const { type } = await handle.describe();
    const history = await handle.fetchHistory();
    const json = historyToJsonObject(history);
    for (const secret of secrets) expect(JSON.stringify(json)).not.toContain(secret);
    const fixture: RecordedHistory = { description, workflowType: type, workflowId, history: json };
    fs.writeFileSync(path.join(HISTORIES_DIR, `${name}.json`), JSON.stringify(fixture, null, 1) + '\n');
  };
  const signalId = (id: string) => `signal/${id}`;
  const accountId = (id: string, account: string) => `signal/${id}/account/${account}`;
  /** A buy on a fresh one-account owner whose scripted bridge takes the command and reports `report` for it. */
  const buyReported = async (report: Record<string, unknown>): Promise<{ f: Fixture; id: string }> => {
    const f = await seed();
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const id = await webhook(f, { action: 'buy', symbol: 'EURUSD', volume: 0.1 }, f.accounts[0]!.id);
    const [command] = await terminal.nextCommands(1);
    await terminal.report([{ commandId: command!.commandId, ...report }]);
    return { f, id };
  };

  recordCase('a', '(a) a buy filled on one account: the signal workflow and its account child', async () => {
    const { f, id } = await buyReported({ status: 'filled', ticket: '900001', price: 1.1 });
    expect((await reportedStatus(stack.ingress.url, f.token, id)).accounts[0]).toMatchObject({ outcome: 'filled' });
    await save('a-buy-filled.signal', signalId(id), 'a buy on one account, filled by the bridge: the parent signal workflow');
    await save(
      'a-buy-filled.account',
      accountId(id, f.accounts[0]!.id),
      'a buy on one account, filled by the bridge: the account child (dispatch, report by Update, outcome)',
    );
  });

  recordCase('b', '(b) a risk refusal: a blocked symbol is rejected before anything is queued', async () => {
    const f = await seed([{ risk: { blockedSymbols: ['XAUUSD'] } as never }]);
    const id = await webhook(f, { action: 'buy', symbol: 'XAUUSD', volume: 0.1 }, f.accounts[0]!.id);
    expect((await reportedStatus(stack.ingress.url, f.token, id)).accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'risk_symbol_blocked' });
    await save(
      'b-risk-refused.account',
      accountId(id, f.accounts[0]!.id),
      'a buy of a blocked symbol: rejected risk_symbol_blocked, its sequence released, nothing dispatched',
    );
  });

  recordCase('c', '(c) a market order no bridge takes before it expires: withdrawn, bridge_offline', async () => {
    const f = await seed([{ risk: { maxSignalAgeMs: 1500 } as never }]);
    const id = await webhook(f, { action: 'buy', symbol: 'EURUSD', volume: 0.1 }, f.accounts[0]!.id);
    expect((await reportedStatus(stack.ingress.url, f.token, id)).accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'bridge_offline' });
    await save(
      'c-bridge-offline.account',
      accountId(id, f.accounts[0]!.id),
      'a buy no bridge took before its expiry (maxSignalAgeMs 1500): the wait timed out, the command was withdrawn, rejected bridge_offline',
    );
  });

  recordCase('d', '(d) a broadcast to two accounts: one filled, one rejected by the broker', async () => {
    const f = await seed([{}, { platform: 'ctrader', bridgeVersion: '1.2.0' }]);
    const terminals = [
      new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken),
      new ScriptedTerminal(stack.ingress.url, f.accounts[1]!.bridgeToken, 'ctrader', '1.2.0'),
    ];
    await Promise.all(terminals.map((t) => t.hello()));
    const id = await webhook(f, { action: 'sell', symbol: 'GBPUSD', volume: 1 });
    const [c0] = await terminals[0]!.nextCommands(1);
    const [c1] = await terminals[1]!.nextCommands(1);
    await terminals[0]!.report([{ commandId: c0!.commandId, status: 'filled', ticket: 'T-0' }]);
    await terminals[1]!.report([{ commandId: c1!.commandId, status: 'rejected', retcode: 'TRADING_BAD_VOLUME', message: 'Bad volume' }]);
    expect((await reportedStatus(stack.ingress.url, f.token, id, { count: 2 })).reported).toBe(2);
    await save(
      'd-broadcast.signal',
      signalId(id),
      'a sell broadcast to two accounts (mt5 filled, ctrader rejected by the broker): the parent with two children',
    );
    await save('d-broadcast.account-0', accountId(id, f.accounts[0]!.id), 'a sell broadcast to two accounts: the mt5 child, filled');
    await save(
      'd-broadcast.account-1',
      accountId(id, f.accounts[1]!.id),
      'a sell broadcast to two accounts: the ctrader child, rejected broker:TRADING_BAD_VOLUME',
    );
  });

  recordCase('e', '(e) a bridge that reports the command expired: rejected signal_expired', async () => {
    const { f, id } = await buyReported({ status: 'expired' });
    expect((await reportedStatus(stack.ingress.url, f.token, id)).accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'signal_expired' });
    await save('e-bridge-expired.account', accountId(id, f.accounts[0]!.id), 'a buy the bridge reported expired: rejected signal_expired');
  });

  recordCase('f', '(f) a buy filled for an owner with a callback endpoint: the parent starts the delivery, which POSTs once', async () => {
    const f = await seed();
    const { secret } = await ownerCallbacksOf(stack.config, stack.redis).register(
      f.owner,
      `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/outcomes`,
    );
    secrets.push(secret);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const id = await webhook(f, { action: 'buy', symbol: 'EURUSD', volume: 0.1 }, f.accounts[0]!.id);
    const [command] = await terminal.nextCommands(1);
    await terminal.report([{ commandId: command!.commandId, status: 'filled', ticket: '900006' }]);
    expect((await reportedStatus(stack.ingress.url, f.token, id)).accounts[0]).toMatchObject({ outcome: 'filled' });
    await save('f-callback.signal', signalId(id), 'a buy filled for an owner with one callback endpoint: the parent, which starts the delivery child');
    await save('f-callback.delivery', `callback:${id}:${f.accounts[0]!.id}`, 'the delivery of that fill to the endpoint: one deliverCallback, delivered');
  });

  recordCase('h', '(h) a close done for an owner with a callback endpoint: the parent pushes signal.exit_outcome', async () => {
    const f = await seed();
    const { secret } = await ownerCallbacksOf(stack.config, stack.redis).register(
      f.owner,
      `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/exits`,
    );
    secrets.push(secret);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const id = await webhook(f, { action: 'close', positionId: '900007' }, f.accounts[0]!.id);
    const [command] = await terminal.nextCommands(1);
    await terminal.report([{ commandId: command!.commandId, status: 'done', ticket: '900007' }]);
    await save(
      'h-exit-callback.signal',
      signalId(id),
      'a close done for an owner with one callback endpoint: the parent, which starts the exit-outcome delivery',
    );
    await save('h-exit-callback.account', accountId(id, f.accounts[0]!.id), 'a close done by the bridge: the account child');
    await save(
      'h-exit-callback.delivery',
      `callback:${id}:${f.accounts[0]!.id}`,
      'the delivery of that exit outcome to the endpoint: one deliverCallback, delivered',
    );
  });
});
