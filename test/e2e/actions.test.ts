import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_SYMBOLS, SyntheticFeed, type BrokerState, type SymbolSpec } from '../../src/paper/broker';
import { readLedger, stateFileFor, type LedgerEntry } from '../../src/paper/ledger';
import { readStateFile } from '../../src/paper/state-file';
import { isMarketEntry, isOpening, type Action } from '../../src/domain/actions';
import type { AccountOutcome } from '../../src/domain/outcome';
import { ensureBuilt, httpGet as get, httpPost as post, processLogDir, startProcessStack, type ProcessStack } from '../../support/processes';
import { admin, importRegistry, writeRegistry, type RegistryFile } from './support';
import { commandIdOf } from '../helpers/commands';
import { MARKET_FILL } from '../helpers/poll-items';
import { ownerDocument } from '../helpers/registry';
import { temporalClient, workflowResult, type TemporalView } from '../helpers/temporal';

/**
 * The actions' contract through the built processes (HTTP → ingress → Temporal → worker → bridge API → paper bridge),
 * on an MT5 and a cTrader account side by side, where the bridge conformance suite (test/conformance/suite.ts) does
 * not look: what the status poll shows of each kind of action (opening signals are reported, every other action is
 * not, whether it ran or was refused: spec §1.6), the X-Idempotency-Key that management actions require (spec §5
 * rule 4), and the owner's risk rules end to end, close-only set with the admin CLI. What each action does at the
 * broker (fills, pending orders, modifications, closes, breakeven, refusals) is the conformance suite's, run on the
 * paper bridge with both platforms' broker codes and on the MT5 and cTrader bridges.
 */

const PLATFORMS = ['mt5', 'ctrader'] as const;
type Platform = (typeof PLATFORMS)[number];

const tag = randomBytes(4).toString('hex');
const ACC: Record<Platform, string> = { mt5: `act-${tag}-mt5`, ctrader: `act-${tag}-ct` };
const RISK: Record<Platform, string> = { mt5: `act-${tag}-risk-mt5`, ctrader: `act-${tag}-risk-ct` };
const riskSettings = { blockedSymbols: ['XAUUSD'], requireStopLoss: true, maxOpenPositions: 1, sizing: { mode: 'fixed', lots: 0.05 } };
const {
  secret,
  token,
  accounts,
  doc: registryDoc,
} = ownerDocument(`act-owner-${tag}`, [
  ...PLATFORMS.map((platform) => ({ id: ACC[platform], platform })),
  ...PLATFORMS.map((platform) => ({ id: RISK[platform], platform, risk: riskSettings })),
]);

/** The broker's refusal of a close of a position it does not hold, as the account workflow shows it. */
const NO_POSITION: Record<Platform, string> = {
  mt5: "broker:10036 Position doesn't exist: ",
  ctrader: 'broker:POSITION_NOT_FOUND Position not found: ',
};

// The paper market as the bridge sees it (the feed is a function of time): pending prices far from the market.
const feed = new SyntheticFeed();
const SPEC: Record<string, SymbolSpec> = Object.fromEntries(DEFAULT_SYMBOLS.map((s) => [s.name, s]));
const quote = (symbol: string, at = Date.now()) => feed.quote(SPEC[symbol]!, at);
/** A price `pips` away from `from`, rounded to the symbol's digits. */
const away = (symbol: string, from: number, pips: number) => Number((from + pips * SPEC[symbol]!.pip).toFixed(SPEC[symbol]!.digits));

/** Runs the same scenario on both platforms at once; a failure names its platform. */
async function both(scenario: (p: Platform) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(PLATFORMS.map((p) => scenario(p)));
  const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [`[${PLATFORMS[i]}] ${(r.reason as Error)?.stack ?? String(r.reason)}`] : []));
  if (failures.length > 0) throw new Error(failures.join('\n\n'));
}

describe("the actions' contract through the built processes on an MT5 and a cTrader account", () => {
  let registry: RegistryFile;
  let ledgerFile: string;
  let stack: ProcessStack | undefined;
  let temporal: TemporalView;

  beforeAll(async () => {
    ensureBuilt();
    registry = writeRegistry(registryDoc, 'actions');
    const dir = path.join(processLogDir(), `actions-${tag}`);
    fs.mkdirSync(dir, { recursive: true });
    ledgerFile = path.join(dir, 'ledger.jsonl');
    expect(await importRegistry(registry.file)).toEqual({ accounts: 4, secrets: 1, tokens: 1 });
    temporal = await temporalClient();
    stack = await startProcessStack({ registryFile: registry.file, ledgerFile });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await temporal?.close();
    registry?.remove();
  });

  const url = () => stack!.ingress.url;
  const poll = (signalId: string) => get(`${url()}/v1/signals/${signalId}`, { authorization: `Bearer ${token}` });
  const state = (accountId: string): BrokerState => readStateFile(stateFileFor(ledgerFile, accountId))!.broker;

  interface Run {
    accountId: string;
    signalId: string;
    commandId: string;
    action: Action;
    /** The account workflow's result. */
    outcome: AccountOutcome;
    /** The status poll's answer after the signal workflow closed. */
    polled: { signalId: string; status: string; reported: number; accounts: unknown[] };
    /** Ledger lines written by this command. */
    ops: LedgerEntry[];
    /** The bridge's stdout line for this command, if the bridge got it. */
    bridge: Record<string, unknown> | undefined;
  }

  interface Submitted {
    accountId: string;
    signalId: string;
    action: Action;
  }

  /** POST to the account's URL; non-opening actions carry an X-Idempotency-Key. Expects the 202. */
  async function submit(accountId: string, body: Record<string, unknown> & { action: Action }): Promise<Submitted> {
    const headers: Record<string, string> = isOpening(body.action) ? {} : { 'x-idempotency-key': `k-${randomBytes(8).toString('hex')}` };
    const res = await post(`${url()}/webhook/custom/${accountId}`, { secret, ...body }, headers);
    if (res.status !== 202) throw new Error(`${body.action} on ${accountId}: ${res.status} ${res.text}`);
    expect(res.body).toMatchObject({ success: true, signalId: expect.stringMatching(/^sig_/), accountsResolved: 1 });
    return { accountId, signalId: res.body.signalId as string, action: body.action };
  }

  /** Waits for the account workflow's and the signal workflow's results, then reads the poll, the ledger and the bridge. */
  async function settle(s: Submitted): Promise<Run> {
    const commandId = commandIdOf(s.signalId, s.accountId);
    const outcome = await workflowResult<AccountOutcome>(temporal.client, commandId);
    await workflowResult(temporal.client, `signal/${s.signalId}`);
    const res = await poll(s.signalId);
    expect(res.status).toBe(200);
    return {
      accountId: s.accountId,
      signalId: s.signalId,
      commandId,
      action: s.action,
      outcome,
      polled: res.body,
      ops: readLedger(ledgerFile).filter((l) => l.commandId === commandId && l.cause === 'command'),
      bridge: stack!.bridge.commands().find((c) => c.commandId === commandId),
    };
  }

  /** Submits several signals back to back (they execute in this acceptance order), then waits for all of them. */
  async function runAll(accountId: string, bodies: (Record<string, unknown> & { action: Action })[]): Promise<Run[]> {
    const submitted: Submitted[] = [];
    for (const body of bodies) submitted.push(await submit(accountId, body));
    return Promise.all(submitted.map(settle));
  }

  /** An entry the broker accepted: `filled` with a ticket in Temporal, and the poll reports exactly that outcome. */
  function expectFilled(r: Run): string {
    expect(r.outcome).toEqual({
      accountId: r.accountId,
      outcome: 'filled',
      ticket: expect.stringMatching(/^\d+$/),
      reason: null,
      occurredAt: expect.any(String),
      // What the entry became (docs/poll.md): a market entry's position with its fill, a pending entry's order.
      ...(isMarketEntry(r.action) ? MARKET_FILL : { entry: 'order' }),
    });
    expect(r.polled).toEqual({ signalId: r.signalId, status: 'reported', reported: 1, accounts: [r.outcome] });
    expect(r.bridge).toMatchObject({ action: r.action, status: 'filled', ticket: r.outcome.ticket, replayed: false });
    return r.outcome.ticket!;
  }

  /** A non-opening action that ran: `done` in Temporal; the poll does not report it (spec §1.6). */
  function expectDone(r: Run, ticket: string | null) {
    expect(r.outcome).toEqual({ accountId: r.accountId, outcome: 'done', ticket, reason: null, occurredAt: expect.any(String) });
    expect(r.polled).toEqual({ signalId: r.signalId, status: 'pending_or_unknown', reported: 0, accounts: [] });
    expect(r.bridge).toMatchObject({ action: r.action, status: 'done', replayed: false });
  }

  /** A refusal: `rejected` with the reason in Temporal; reported by the poll only for entries; nothing in the ledger. */
  function expectRejected(r: Run, reasonStart: string) {
    expect(r.outcome).toEqual({ accountId: r.accountId, outcome: 'rejected', ticket: null, reason: expect.any(String), occurredAt: expect.any(String) });
    expect({ action: r.action, reason: r.outcome.reason!.slice(0, reasonStart.length) }).toEqual({ action: r.action, reason: reasonStart });
    if (isOpening(r.action)) expect(r.polled).toEqual({ signalId: r.signalId, status: 'reported', reported: 1, accounts: [r.outcome] });
    else expect(r.polled).toEqual({ signalId: r.signalId, status: 'pending_or_unknown', reported: 0, accounts: [] });
    expect(r.ops).toEqual([]);
  }

  /** The single ledger line of a command. */
  function onlyOp(r: Run): LedgerEntry {
    expect(r.ops).toHaveLength(1);
    return r.ops[0]!;
  }

  test('the processes run and the bridge said hello for all four accounts', () => {
    for (const p of stack!.all()) expect(p.running).toBe(true);
    const hellos = new Set(
      stack!.bridge
        .jsonLines('stderr')
        .filter((l) => l.event === 'hello')
        .map((l) => l.serverAccountId),
    );
    expect([...hellos].sort()).toEqual(accounts.map((a) => a.id).sort());
  });

  test('when entries fill, then the poll reports each with its outcome; when other actions run or are refused, then the poll reports none of them (spec §1.6)', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const eur = quote('EURUSD');
      const [buy, limit] = await runAll(acc, [
        { action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 100 },
        { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: away('EURUSD', eur.bid, -200) },
      ]);
      const position = expectFilled(buy!);
      const order = expectFilled(limit!);
      const [modified, cancelled, unknown, closed] = await runAll(acc, [
        { action: 'modify_tp', positionId: position, tp: away('EURUSD', onlyOp(buy!).price!, +150) },
        { action: 'cancel_pending', orderId: order },
        { action: 'close', positionId: '99999999' },
        { action: 'close', positionId: position },
      ]);
      expectDone(modified!, position);
      expectDone(cancelled!, order);
      expectRejected(unknown!, NO_POSITION[p]);
      expectDone(closed!, position);
      expect(state(acc)).toMatchObject({ positions: [], orders: [] });
    });
  }, 90_000);

  test('when modify_sl, modify_tp, breakeven or a filtered close comes without an X-Idempotency-Key, then it is 400 naming the header and nothing runs (spec §5 rule 4)', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const before = stack!.bridge.commands().length;
      for (const [body, what] of [
        [{ action: 'modify_sl', positionId: '123456', sl: 1 }, 'modify_sl'],
        [{ action: 'modify_tp', positionId: '123456', tp: 2 }, 'modify_tp'],
        [{ action: 'breakeven', positionId: '123456' }, 'breakeven'],
        [{ action: 'close', symbol: 'EURUSD' }, 'a filtered close'],
      ] as const) {
        const noKey = await post(`${url()}/webhook/custom/${acc}`, { secret, ...body });
        expect({ what, status: noKey.status, details: noKey.body.details }).toEqual({
          what,
          status: 400,
          details: [{ path: 'X-Idempotency-Key', message: `required for ${what}` }],
        });
      }
      expect(stack!.bridge.commands()).toHaveLength(before);
    });
  }, 60_000);

  test('risk rules through the whole stack: blocked symbol, stop loss required, fixed sizing, max open positions (bridge), close-only', async () => {
    await both(async (p) => {
      const acc = RISK[p];
      const eur = quote('EURUSD');
      const [blocked, noSl, sized, second, pending] = await runAll(acc, [
        // Blocked is checked before the stop loss (reason-codes.md order), and ignores case.
        { action: 'buy', symbol: 'xauusd', volume: 0.1 },
        { action: 'buy', symbol: 'EURUSD', volume: 0.1 },
        { action: 'buy', symbol: 'EURUSD', volume: 0.3, slPips: 100 },
        { action: 'sell', symbol: 'GBPUSD', volume: 0.1, slPips: 100 },
        { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: away('EURUSD', eur.bid, -50), slPips: 30 },
      ]);
      expectRejected(blocked!, 'risk_symbol_blocked');
      expect(blocked!.outcome.reason).toBe('risk_symbol_blocked');
      expectRejected(noSl!, 'risk_stop_loss_required');
      expect(noSl!.outcome.reason).toBe('risk_stop_loss_required');
      // Refused by the rules in the workflow: the bridge never got these commands.
      expect([blocked!.bridge, noSl!.bridge]).toEqual([undefined, undefined]);

      const ticket = expectFilled(sized!);
      expect(onlyOp(sized!)).toMatchObject({ op: 'open', ticket, volume: 0.05 });

      for (const r of [second!, pending!]) {
        expectRejected(r, 'risk_max_open_positions');
        expect(r.outcome.reason).toBe('risk_max_open_positions');
        // This one the bridge refused: it alone knows the open positions.
        expect(r.bridge).toMatchObject({ status: 'rejected', retcode: 'risk_max_open_positions' });
      }

      await admin(['account', 'risk', acc, '--set', JSON.stringify({ ...riskSettings, closeOnly: true })]);
      const [closeOnly, exit] = await runAll(acc, [
        { action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 100 },
        { action: 'close', positionId: ticket },
      ]);
      expectRejected(closeOnly!, 'risk_close_only');
      expect(closeOnly!.outcome.reason).toBe('risk_close_only');
      // Exits still run in close-only mode.
      expectDone(exit!, ticket);
      expect(onlyOp(exit!)).toMatchObject({ op: 'close', ticket, volume: 0.05 });
      expect(state(acc).positions).toEqual([]);
    });
  }, 90_000);
});
