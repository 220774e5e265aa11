import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { DEFAULT_SYMBOLS, SyntheticFeed, type BrokerState, type Side, type SymbolSpec } from '../../src/paper/broker';
import { readLedger, stateFileFor, type LedgerEntry } from '../../src/paper/ledger';
import { readStateFile } from '../../src/paper/state-file';
import { newCredential } from '../../src/registry/credentials';
import { isMarketEntry, isOpening, type Action } from '../../src/domain/actions';
import type { AccountOutcome } from '../../src/domain/outcome';
import { ensureBuilt, httpGet as get, httpPost as post, processLogDir, startProcessStack, type ProcessStack } from '../../support/processes';
import { admin, commandIdOf, importRegistry, temporalAccess, workflowResult, writeRegistry, type RegistryFile, type TemporalAccess } from './support';
import { SPEC_ACTIONS } from '../helpers/spec-actions';
import { MARKET_FILL } from '../helpers/poll-items';

/**
 * All 17 actions end to end through the built processes: HTTP → ingress → Temporal → worker → bridge API → paper
 * bridge, on an MT5 account and a cTrader account of the same stack (per-account URL), with their effect checked in
 * the paper bridge's ledger and in its saved account state, their outcome in Temporal (the account workflow's
 * result), and what the status poll shows: opening signals are reported, every other action is not (spec §1.6).
 *
 * The paper feed is a deterministic function of time (SyntheticFeed), so the test computes the same quotes the
 * bridge sees: pending prices are placed far from the market, and breakeven waits for the moment a position is in
 * profit, predicted from the feed.
 */

const PLATFORMS = ['mt5', 'ctrader'] as const;
type Platform = (typeof PLATFORMS)[number];

const tag = randomBytes(4).toString('hex');
const owner = `act-owner-${tag}`;
const ACC: Record<Platform, string> = { mt5: `act-${tag}-mt5`, ctrader: `act-${tag}-ct` };
const RISK: Record<Platform, string> = { mt5: `act-${tag}-risk-mt5`, ctrader: `act-${tag}-risk-ct` };
const riskSettings = { blockedSymbols: ['XAUUSD'], requireStopLoss: true, maxOpenPositions: 1, sizing: { mode: 'fixed', lots: 0.05 } };
const secret = newCredential('whsec');
const token = newCredential('tok');
const VERSION: Record<Platform, string> = { mt5: '2.1.0', ctrader: '1.2.0' };
const allAccounts = [...PLATFORMS.map((p) => ACC[p]), ...PLATFORMS.map((p) => RISK[p])];
const registryDoc = {
  accounts: [
    ...PLATFORMS.map((p) => ({ id: ACC[p], owner, platform: p, bridgeVersion: VERSION[p], bridgeToken: newCredential('brg') })),
    ...PLATFORMS.map((p) => ({ id: RISK[p], owner, platform: p, bridgeVersion: VERSION[p], risk: riskSettings, bridgeToken: newCredential('brg') })),
  ],
  secrets: [{ secret, owner, accounts: allAccounts }],
  tokens: [{ token, accounts: allAccounts, suspendedUntil: null }],
};

/** The broker's refusals as the poll / the account workflow show them: `broker:<retcode> <message>: <detail>`. */
const BROKER: Record<Platform, Record<'badStops' | 'badVolume' | 'badPrice' | 'noPosition' | 'noOrder' | 'unknownSymbol', string>> = {
  mt5: {
    badStops: 'broker:10016 Invalid stops: ',
    badVolume: 'broker:10014 Invalid volume: ',
    badPrice: 'broker:10015 Invalid price: ',
    noPosition: "broker:10036 Position doesn't exist: ",
    noOrder: 'broker:4754 Order not found: ',
    unknownSymbol: 'broker:10013 Invalid request: unknown symbol ',
  },
  ctrader: {
    badStops: 'broker:TRADING_BAD_STOPS Bad stops: ',
    badVolume: 'broker:TRADING_BAD_VOLUME Bad volume: ',
    badPrice: 'broker:TRADING_BAD_PRICES Bad prices: ',
    noPosition: 'broker:POSITION_NOT_FOUND Position not found: ',
    noOrder: 'broker:ORDER_NOT_FOUND Order not found: ',
    unknownSymbol: 'broker:SYMBOL_NOT_FOUND Symbol not found: unknown symbol ',
  },
};

// ---- the paper market, as the bridge sees it --------------------------------------------------------------------

const feed = new SyntheticFeed();
const SPEC: Record<string, SymbolSpec> = Object.fromEntries(DEFAULT_SYMBOLS.map((s) => [s.name, s]));
const quote = (symbol: string, at = Date.now()) => feed.quote(SPEC[symbol]!, at);
const pip = (symbol: string) => SPEC[symbol]!.pip;
/** A price `pips` away from `from`, rounded to the symbol's digits. */
const away = (symbol: string, from: number, pips: number) => Number((from + pips * pip(symbol)).toFixed(SPEC[symbol]!.digits));
/** Asserts a price level equals `expected` at the symbol's digits. */
function expectPrice(actual: unknown, expected: number, symbol: string, what: string) {
  expect({ what, value: typeof actual === 'number' ? Number(actual.toFixed(SPEC[symbol]!.digits)) : actual }).toEqual({
    what,
    value: Number(expected.toFixed(SPEC[symbol]!.digits)),
  });
}
const inAnHour = (h = 1) => new Date(Date.now() + h * 3_600_000).toISOString();

// ---- running the two platforms side by side ---------------------------------------------------------------------

/** Runs the same scenario on both platforms at once; a failure names its platform. */
async function both(scenario: (p: Platform) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(PLATFORMS.map((p) => scenario(p)));
  const failures = results.flatMap((r, i) => (r.status === 'rejected' ? [`[${PLATFORMS[i]}] ${(r.reason as Error)?.stack ?? String(r.reason)}`] : []));
  if (failures.length > 0) throw new Error(failures.join('\n\n'));
}

/** What the test remembers of each platform's account between tests: tickets of positions and orders. */
interface Book {
  buyEURUSD?: string;
  sellUSDJPY?: string;
  buyLimit?: string;
  sellLimit?: string;
  buyStop?: string;
  sellStop?: string;
  buyStopLimit?: string;
  sellStopLimit?: string;
  buyAUDUSD?: string;
}
const book: Record<Platform, Book> = { mt5: {}, ctrader: {} };

describe('all 17 actions through the built processes on an MT5 and a cTrader account', () => {
  let registry: RegistryFile;
  let ledgerFile: string;
  let stack: ProcessStack | undefined;
  let temporal: TemporalAccess;
  const timings: { what: string; ms: number }[] = [];
  const waits: string[] = [];

  beforeAll(async () => {
    ensureBuilt();
    registry = writeRegistry(registryDoc, 'actions');
    const dir = path.join(processLogDir(), `actions-${tag}`);
    fs.mkdirSync(dir, { recursive: true });
    ledgerFile = path.join(dir, 'ledger.jsonl');
    expect(await importRegistry(registry.file)).toEqual({ accounts: 4, secrets: 1, tokens: 1 });
    temporal = await temporalAccess();
    stack = await startProcessStack({ registryFile: registry.file, ledgerFile });
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await temporal?.close();
    registry?.remove();
    if (timings.length > 0) {
      const ms = timings.map((t) => t.ms).sort((a, b) => a - b);
      const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))];
      console.log(
        `[actions] ${ms.length} signals, 202 → account workflow closed: median ${at(0.5)} ms, p90 ${at(0.9)} ms, max ${ms[ms.length - 1]} ms; ` +
          `breakeven waited ${waits.join(', ')}`,
      );
    }
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
    at: number;
  }

  /** POST to the account's URL; non-opening actions carry an X-Idempotency-Key. Expects the 202. */
  async function submit(accountId: string, body: Record<string, unknown> & { action: Action }): Promise<Submitted> {
    const headers: Record<string, string> = isOpening(body.action) ? {} : { 'x-idempotency-key': `k-${randomBytes(8).toString('hex')}` };
    const res = await post(`${url()}/webhook/custom/${accountId}`, { secret, ...body }, headers);
    if (res.status !== 202) throw new Error(`${body.action} on ${accountId}: ${res.status} ${res.text}`);
    expect(res.body).toMatchObject({ success: true, signalId: expect.stringMatching(/^sig_/), accountsResolved: 1 });
    return { accountId, signalId: res.body.signalId as string, action: body.action, at: Date.now() };
  }

  /** Waits for the account workflow's and the signal workflow's results, then reads the poll, the ledger and the bridge. */
  async function settle(s: Submitted): Promise<Run> {
    const commandId = commandIdOf(s.signalId, s.accountId);
    const outcome = await workflowResult<AccountOutcome>(temporal.client, commandId);
    await workflowResult(temporal.client, `signal/${s.signalId}`);
    timings.push({ what: `${s.action} on ${s.accountId}`, ms: Date.now() - s.at });
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

  const run = async (accountId: string, body: Record<string, unknown> & { action: Action }) => settle(await submit(accountId, body));

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
    expect([...hellos].sort()).toEqual([...allAccounts].sort());
  });

  test('buy and sell: filled at the ask / bid with a ticket; slPips/tpPips become prices from the fill price', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const [buy, sell] = await runAll(acc, [
        { action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 100, tpPips: 150 },
        { action: 'sell', symbol: 'USDJPY', volume: 0.2, slPips: 100, tpPips: 150 },
      ]);
      const buyTicket = expectFilled(buy!);
      const sellTicket = expectFilled(sell!);
      expect(buyTicket).not.toBe(sellTicket);

      const open = onlyOp(buy!);
      expect(open).toMatchObject({ accountId: acc, op: 'open', ticket: buyTicket, symbol: 'EURUSD', side: 'buy', volume: 0.1, action: 'buy' });
      // A buy fills at the ask of that instant (the feed is a function of time; one point of tolerance for the clock).
      expect(Math.abs(open.price! - quote('EURUSD', Date.parse(open.time)).ask)).toBeLessThanOrEqual(0.00001 + 1e-9);
      expectPrice(open.sl, open.price! - 100 * pip('EURUSD'), 'EURUSD', 'buy sl = fill − 100 pips');
      expectPrice(open.tp, open.price! + 150 * pip('EURUSD'), 'EURUSD', 'buy tp = fill + 150 pips');
      expect(buy!.bridge).toMatchObject({ price: open.price, volume: 0.1 });

      const sold = onlyOp(sell!);
      expect(sold).toMatchObject({ accountId: acc, op: 'open', ticket: sellTicket, symbol: 'USDJPY', side: 'sell', volume: 0.2, action: 'sell' });
      expect(Math.abs(sold.price! - quote('USDJPY', Date.parse(sold.time)).bid)).toBeLessThanOrEqual(0.001 + 1e-9);
      // JPY pair: pip 0.01, three digits.
      expectPrice(sold.sl, sold.price! + 100 * 0.01, 'USDJPY', 'sell sl = fill + 100 pips');
      expectPrice(sold.tp, sold.price! - 150 * 0.01, 'USDJPY', 'sell tp = fill − 150 pips');

      const positions = state(acc).positions;
      expect(positions).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ ticket: buyTicket, side: 'buy', volume: 0.1, openPrice: open.price, sl: open.sl, tp: open.tp }),
          expect.objectContaining({ ticket: sellTicket, side: 'sell', volume: 0.2, openPrice: sold.price, sl: sold.sl, tp: sold.tp }),
        ]),
      );
      book[p].buyEURUSD = buyTicket;
      book[p].sellUSDJPY = sellTicket;
    });
  }, 60_000);

  test('buy_limit, sell_limit, buy_stop, sell_stop: the order is placed (ticket = the order), slPips/tpPips from the entry price', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const eur = quote('EURUSD');
      const gbp = quote('GBPUSD');
      const buyLimit = away('EURUSD', eur.bid, -50);
      const sellLimit = away('EURUSD', eur.ask, +50);
      const buyStop = away('GBPUSD', gbp.ask, +50);
      const sellStop = away('GBPUSD', gbp.bid, -50);
      const runs = await runAll(acc, [
        { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: buyLimit, slPips: 30, tpPips: 60 },
        { action: 'sell_limit', symbol: 'EURUSD', volume: 0.2, price: sellLimit, slPips: 30, tpPips: 60 },
        { action: 'buy_stop', symbol: 'GBPUSD', volume: 0.3, price: buyStop, sl: away('GBPUSD', buyStop, -40), tp: away('GBPUSD', buyStop, +80) },
        { action: 'sell_stop', symbol: 'GBPUSD', volume: 0.4, price: sellStop, slPips: 40, tpPips: 80 },
      ]);
      const expected = [
        {
          side: 'buy',
          orderType: 'limit',
          symbol: 'EURUSD',
          volume: 0.1,
          price: buyLimit,
          sl: away('EURUSD', buyLimit, -30),
          tp: away('EURUSD', buyLimit, +60),
        },
        {
          side: 'sell',
          orderType: 'limit',
          symbol: 'EURUSD',
          volume: 0.2,
          price: sellLimit,
          sl: away('EURUSD', sellLimit, +30),
          tp: away('EURUSD', sellLimit, -60),
        },
        { side: 'buy', orderType: 'stop', symbol: 'GBPUSD', volume: 0.3, price: buyStop, sl: away('GBPUSD', buyStop, -40), tp: away('GBPUSD', buyStop, +80) },
        {
          side: 'sell',
          orderType: 'stop',
          symbol: 'GBPUSD',
          volume: 0.4,
          price: sellStop,
          sl: away('GBPUSD', sellStop, +40),
          tp: away('GBPUSD', sellStop, -80),
        },
      ];
      const tickets = runs.map((r, i) => {
        const ticket = expectFilled(r);
        const op = onlyOp(r);
        const e = expected[i]!;
        expect(op).toMatchObject({
          accountId: acc,
          op: 'place',
          ticket,
          action: r.action,
          symbol: e.symbol,
          side: e.side,
          orderType: e.orderType,
          volume: e.volume,
          expiry: null,
        });
        expectPrice(op.price, e.price, e.symbol, `${r.action} price`);
        expectPrice(op.sl, e.sl, e.symbol, `${r.action} sl`);
        expectPrice(op.tp, e.tp, e.symbol, `${r.action} tp`);
        // "filled" for a pending entry means the broker accepted the order: the bridge reports the entry price.
        expect(r.bridge).toMatchObject({ price: op.price, volume: e.volume });
        return ticket;
      });
      expect(new Set(tickets).size).toBe(4);
      const s = state(acc);
      for (const [i, ticket] of tickets.entries()) {
        expect(s.orders).toContainEqual(
          expect.objectContaining({ ticket, type: expected[i]!.orderType, side: expected[i]!.side, volume: expected[i]!.volume }),
        );
        expect(s.positions.map((x) => x.ticket)).not.toContain(ticket);
      }
      [book[p].buyLimit, book[p].sellLimit, book[p].buyStop, book[p].sellStop] = tickets;
    });
  }, 60_000);

  test('buy_stop_limit and sell_stop_limit: placed as stop-limit orders with trigger and limit price', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const eur = quote('EURUSD');
      const gbp = quote('GBPUSD');
      const buyTrigger = away('EURUSD', eur.ask, +60);
      const buyPrice = away('EURUSD', eur.ask, +50);
      const sellTrigger = away('GBPUSD', gbp.bid, -60);
      const sellPrice = away('GBPUSD', gbp.bid, -50);
      const [buy, sell] = await runAll(acc, [
        { action: 'buy_stop_limit', symbol: 'EURUSD', volume: 0.1, price: buyPrice, stopLimitPrice: buyTrigger, slPips: 25, tpPips: 50 },
        {
          action: 'sell_stop_limit',
          symbol: 'GBPUSD',
          volume: 0.2,
          price: sellPrice,
          stopLimitPrice: sellTrigger,
          sl: away('GBPUSD', sellPrice, +25),
          tp: away('GBPUSD', sellPrice, -50),
        },
      ]);
      const buyTicket = expectFilled(buy!);
      const sellTicket = expectFilled(sell!);
      const b = onlyOp(buy!);
      expect(b).toMatchObject({ op: 'place', ticket: buyTicket, side: 'buy', orderType: 'stop_limit', symbol: 'EURUSD', volume: 0.1 });
      expectPrice(b.price, buyPrice, 'EURUSD', 'buy stop-limit price');
      expectPrice(b.stopLimitPrice, buyTrigger, 'EURUSD', 'buy stop-limit trigger');
      expectPrice(b.sl, away('EURUSD', buyPrice, -25), 'EURUSD', 'sl = limit price − 25 pips');
      expectPrice(b.tp, away('EURUSD', buyPrice, +50), 'EURUSD', 'tp = limit price + 50 pips');
      const s = onlyOp(sell!);
      expect(s).toMatchObject({ op: 'place', ticket: sellTicket, side: 'sell', orderType: 'stop_limit', symbol: 'GBPUSD', volume: 0.2 });
      expectPrice(s.price, sellPrice, 'GBPUSD', 'sell stop-limit price');
      expectPrice(s.stopLimitPrice, sellTrigger, 'GBPUSD', 'sell stop-limit trigger');
      const orders = state(acc).orders;
      expect(orders).toContainEqual(expect.objectContaining({ ticket: buyTicket, type: 'stop_limit', stopLimitPrice: b.stopLimitPrice, price: b.price }));
      expect(orders).toContainEqual(expect.objectContaining({ ticket: sellTicket, type: 'stop_limit', stopLimitPrice: s.stopLimitPrice, price: s.price }));
      book[p].buyStopLimit = buyTicket;
      book[p].sellStopLimit = sellTicket;
    });
  }, 60_000);

  test('modify_pending (price, stopLimitPrice, sl, tp, expiry) and modify_pending_expiry change the orders; not reported by the poll', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const before = state(acc).orders;
      const limitBefore = before.find((o) => o.ticket === book[p].buyLimit)!;
      const sellLimitBefore = before.find((o) => o.ticket === book[p].sellLimit)!;
      const eur = quote('EURUSD');
      const trigger = away('EURUSD', eur.ask, +70);
      const price = away('EURUSD', eur.ask, +65);
      const sl = away('EURUSD', price, -20);
      const tp = away('EURUSD', price, +40);
      const expiry = inAnHour(1);
      const newLimit = away('EURUSD', eur.bid, -55);
      const sellExpiry = inAnHour(2);
      const [all5, priceOnly, expiryOnly] = await runAll(acc, [
        { action: 'modify_pending', orderId: book[p].buyStopLimit, price, stopLimitPrice: trigger, sl, tp, expiry },
        { action: 'modify_pending', orderId: book[p].buyLimit, price: newLimit },
        { action: 'modify_pending_expiry', orderId: book[p].sellLimit, expiry: sellExpiry },
      ]);

      expectDone(all5!, book[p].buyStopLimit!);
      const m = onlyOp(all5!);
      expect(m).toMatchObject({ op: 'modify_order', ticket: book[p].buyStopLimit, orderType: 'stop_limit', expiry });
      expectPrice(m.price, price, 'EURUSD', 'new limit price');
      expectPrice(m.stopLimitPrice, trigger, 'EURUSD', 'new trigger');
      expectPrice(m.sl, sl, 'EURUSD', 'new sl');
      expectPrice(m.tp, tp, 'EURUSD', 'new tp');

      // Only the price changes; sl, tp and expiry are kept.
      expectDone(priceOnly!, book[p].buyLimit!);
      const m2 = onlyOp(priceOnly!);
      expect(m2).toMatchObject({ op: 'modify_order', ticket: book[p].buyLimit, orderType: 'limit', sl: limitBefore.sl, tp: limitBefore.tp, expiry: null });
      expectPrice(m2.price, newLimit, 'EURUSD', 'modified limit price');

      expectDone(expiryOnly!, book[p].sellLimit!);
      expect(onlyOp(expiryOnly!)).toMatchObject({
        op: 'modify_order',
        action: 'modify_pending_expiry',
        ticket: book[p].sellLimit,
        price: sellLimitBefore.price,
        sl: sellLimitBefore.sl,
        tp: sellLimitBefore.tp,
        expiry: sellExpiry,
      });

      const orders = state(acc).orders;
      expect(orders).toContainEqual(
        expect.objectContaining({ ticket: book[p].buyStopLimit, price: m.price, stopLimitPrice: m.stopLimitPrice, sl: m.sl, tp: m.tp, expiry }),
      );
      expect(orders).toContainEqual(expect.objectContaining({ ticket: book[p].buyLimit, price: m2.price, sl: limitBefore.sl, tp: limitBefore.tp }));
      expect(orders).toContainEqual(expect.objectContaining({ ticket: book[p].sellLimit, price: sellLimitBefore.price, expiry: sellExpiry }));
    });
  }, 60_000);

  test('cancel_pending removes the order named by orderId (the pending ticket)', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const r = await run(acc, { action: 'cancel_pending', orderId: book[p].buyStop });
      expectDone(r, book[p].buyStop!);
      expect(onlyOp(r)).toMatchObject({ op: 'cancel', ticket: book[p].buyStop, orderType: 'stop', symbol: 'GBPUSD', side: 'buy' });
      const s = state(acc);
      expect(s.orders.map((o) => o.ticket)).not.toContain(book[p].buyStop);
      expect(s.orders.map((o) => o.ticket)).toContain(book[p].sellStop);
    });
  }, 60_000);

  test('modify_sl and modify_tp set one level and keep the other; an unchanged level is "No changes"; without X-Idempotency-Key they, breakeven and a filtered close are 400', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      // Spec §5 rule 4: breakeven, modify_sl, modify_tp and a filtered close need a key; without one, 400.
      for (const [body, what] of [
        [{ action: 'modify_sl', positionId: book[p].buyEURUSD, sl: 1 }, 'modify_sl'],
        [{ action: 'modify_tp', positionId: book[p].buyEURUSD, tp: 2 }, 'modify_tp'],
        [{ action: 'breakeven', positionId: book[p].buyEURUSD }, 'breakeven'],
        [{ action: 'close', symbol: 'EURUSD' }, 'a filtered close'],
      ] as const) {
        const noKey = await post(`${url()}/webhook/custom/${acc}`, { secret, ...body });
        expect({ what, status: noKey.status, details: noKey.body.details }).toEqual({
          what,
          status: 400,
          details: [{ path: 'X-Idempotency-Key', message: `required for ${what}` }],
        });
      }

      const pos = state(acc).positions.find((x) => x.ticket === book[p].buyEURUSD)!;
      const sl = away('EURUSD', pos.openPrice, -80);
      const tp = away('EURUSD', pos.openPrice, +120);
      const [modSl, modTp, same] = await runAll(acc, [
        { action: 'modify_sl', positionId: book[p].buyEURUSD, sl },
        { action: 'modify_tp', positionId: book[p].buyEURUSD, tp },
        { action: 'modify_tp', positionId: book[p].buyEURUSD, tp },
      ]);
      expectDone(modSl!, book[p].buyEURUSD!);
      const a = onlyOp(modSl!);
      expect(a).toMatchObject({ op: 'modify', action: 'modify_sl', ticket: book[p].buyEURUSD, tp: pos.tp });
      expectPrice(a.sl, sl, 'EURUSD', 'modified sl');
      expectDone(modTp!, book[p].buyEURUSD!);
      const b = onlyOp(modTp!);
      expect(b).toMatchObject({ op: 'modify', action: 'modify_tp', ticket: book[p].buyEURUSD, sl: a.sl });
      expectPrice(b.tp, tp, 'EURUSD', 'modified tp');
      // The same level again changes nothing: a success, MT5 retcode 10025 / cTrader message only; no ledger line.
      expectDone(same!, book[p].buyEURUSD!);
      expect(same!.ops).toEqual([]);
      expect(same!.bridge).toMatchObject(p === 'mt5' ? { retcode: 10025, message: 'No changes' } : { retcode: null, message: 'No changes' });
      expect(state(acc).positions).toContainEqual(expect.objectContaining({ ticket: book[p].buyEURUSD, sl: a.sl, tp: b.tp }));
    });
  }, 60_000);

  test('partial_close closes part of a position; the rest stays open under the same ticket; an off-step partialVolume is refused', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const [part, offStep] = await runAll(acc, [
        { action: 'partial_close', positionId: book[p].buyEURUSD, partialVolume: 0.04 },
        { action: 'partial_close', positionId: book[p].buyEURUSD, partialVolume: 0.015 },
      ]);
      expectDone(part!, book[p].buyEURUSD!);
      expect(onlyOp(part!)).toMatchObject({
        op: 'partial_close',
        ticket: book[p].buyEURUSD,
        volume: 0.04,
        profit: expect.any(Number),
        balance: expect.any(Number),
      });
      expect(part!.bridge).toMatchObject({ volume: 0.04 });
      expectRejected(offStep!, BROKER[p].badVolume);
      const pos = state(acc).positions.filter((x) => x.ticket === book[p].buyEURUSD);
      expect(pos).toEqual([expect.objectContaining({ ticket: book[p].buyEURUSD, volume: 0.06 })]);
    });
  }, 60_000);

  test('close by positionId (the ticket of an earlier fill) closes that position in full', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const r = await run(acc, { action: 'close', positionId: book[p].sellUSDJPY });
      expectDone(r, book[p].sellUSDJPY!);
      expect(onlyOp(r)).toMatchObject({ op: 'close', ticket: book[p].sellUSDJPY, symbol: 'USDJPY', side: 'sell', volume: 0.2, profit: expect.any(Number) });
      // A sell closes at the ask.
      const op = onlyOp(r);
      expect(Math.abs(op.price! - quote('USDJPY', Date.parse(op.time)).ask)).toBeLessThanOrEqual(0.001 + 1e-9);
      expect(state(acc).positions.map((x) => x.ticket)).not.toContain(book[p].sellUSDJPY);
    });
  }, 60_000);

  test('a filtered close by symbol and side closes only the matching positions', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const [buy, sell] = await runAll(acc, [
        { action: 'buy', symbol: 'AUDUSD', volume: 0.03 },
        { action: 'sell', symbol: 'AUDUSD', volume: 0.05 },
      ]);
      const buyTicket = expectFilled(buy!);
      const sellTicket = expectFilled(sell!);
      const close = await run(acc, { action: 'close', symbol: 'AUDUSD', side: 'sell' });
      expectDone(close, sellTicket);
      expect(onlyOp(close)).toMatchObject({ op: 'close', ticket: sellTicket, side: 'sell', volume: 0.05 });
      const tickets = state(acc).positions.map((x) => x.ticket);
      expect(tickets).toContain(buyTicket);
      expect(tickets).not.toContain(sellTicket);
      book[p].buyAUDUSD = buyTicket;
    });
  }, 60_000);

  test('breakeven moves the SL to the entry once the position is in profit, and is invalid stops while it is not; a filtered close by pnl picks loss or profit', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      // A symbol the account holds no position in, and the moment the market will have moved enough: a buy and a sell
      // are opened together; whichever the feed moves into profit first is the winner, the other is the loser.
      const held = new Set(state(acc).positions.map((x) => x.symbol.toUpperCase()));
      const candidates = ['EURUSD', 'GBPUSD', 'USDJPY', 'AUDUSD', 'XAUUSD'].filter((s) => !held.has(s));
      const predicted = candidates
        .map((symbol) => {
          const fillAt = Date.now() + 1500;
          const q = quote(symbol, fillAt);
          const at = Math.min(
            profitWindow(symbol, 'buy', q.ask, q.bid, fillAt + 2000) ?? Infinity,
            profitWindow(symbol, 'sell', q.bid, q.ask, fillAt + 2000) ?? Infinity,
          );
          return { symbol, at };
        })
        .sort((a, b) => a.at - b.at)[0]!;
      const symbol = predicted.symbol;
      const [buy, sell] = await runAll(acc, [
        { action: 'buy', symbol, volume: 0.01 },
        { action: 'sell', symbol, volume: 0.01 },
      ]);
      const pos = { buy: { ticket: expectFilled(buy!), open: onlyOp(buy!).price! }, sell: { ticket: expectFilled(sell!), open: onlyOp(sell!).price! } };
      const from = Date.now() + 300;
      const buyAt = profitWindow(symbol, 'buy', pos.buy.open, pos.sell.open, from) ?? Infinity;
      const sellAt = profitWindow(symbol, 'sell', pos.sell.open, pos.buy.open, from) ?? Infinity;
      const winnerSide: Side = buyAt <= sellAt ? 'buy' : 'sell';
      const loserSide: Side = winnerSide === 'buy' ? 'sell' : 'buy';
      const at = Math.min(buyAt, sellAt);
      if (!Number.isFinite(at)) throw new Error(`no profit window for ${symbol} in the next ${HORIZON_MS} ms`);
      const waited = Math.max(0, at - Date.now());
      await new Promise((r) => setTimeout(r, waited));
      waits.push(`${p}: ${waited} ms for a ${symbol} ${winnerSide} to be in profit`);

      const winner = pos[winnerSide];
      const loser = pos[loserSide];
      const [beLoser, closeLoss, beWinner, closeProfit] = await runAll(acc, [
        { action: 'breakeven', positionId: loser.ticket },
        { action: 'close', symbol, pnl: 'loss' },
        { action: 'breakeven', positionId: winner.ticket },
        { action: 'close', symbol, pnl: 'profit' },
      ]);
      // Not in profit: the entry is not beyond the closing price, so an SL there is on the wrong side.
      expectRejected(beLoser!, BROKER[p].badStops);
      expectDone(closeLoss!, loser.ticket);
      const lossOp = onlyOp(closeLoss!);
      expect(lossOp).toMatchObject({ op: 'close', ticket: loser.ticket, side: loserSide });
      expect(lossOp.profit).toBeLessThan(0);
      expectDone(beWinner!, winner.ticket);
      const be = onlyOp(beWinner!);
      expect(be).toMatchObject({ op: 'modify', action: 'breakeven', ticket: winner.ticket, sl: winner.open, tp: null });
      expectDone(closeProfit!, winner.ticket);
      const profitOp = onlyOp(closeProfit!);
      expect(profitOp).toMatchObject({ op: 'close', ticket: winner.ticket, side: winnerSide, sl: winner.open });
      expect(profitOp.profit).toBeGreaterThan(0);
      expect(state(acc).positions.filter((x) => x.symbol === symbol)).toEqual([]);
    });
  }, 150_000);

  test('broker refusals: bad stops, bad price, unknown symbol, unknown position, unknown order, bad volume → rejected with broker:<retcode>; an off-step volume is rounded down to the symbol step', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const eur = quote('EURUSD');
      const limit = away('EURUSD', eur.bid, -50);
      const runs = await runAll(acc, [
        { action: 'sell', symbol: 'EURUSD', volume: 0.1, tp: away('EURUSD', eur.ask, +50) },
        { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: limit, sl: away('EURUSD', limit, +10) },
        { action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: away('EURUSD', eur.ask, +20) },
        { action: 'buy', symbol: 'FOOBAR', volume: 0.1 },
        { action: 'close', positionId: '99999999' },
        { action: 'modify_sl', positionId: '99999999', sl: 1.0 },
        { action: 'breakeven', positionId: '99999999' },
        { action: 'partial_close', positionId: '99999999', partialVolume: 0.01 },
        { action: 'cancel_pending', orderId: '99999999' },
        // A position's ticket is not an order.
        { action: 'cancel_pending', orderId: book[p].buyEURUSD },
        { action: 'modify_pending_expiry', orderId: '99999999', expiry: inAnHour() },
        // Above the symbol's maximum (50 lots of XAUUSD): the service does not clip, the broker refuses.
        { action: 'buy', symbol: 'XAUUSD', volume: 60 },
        { action: 'buy', symbol: 'EURUSD', volume: 0.015 },
        { action: 'buy', symbol: 'US30', volume: 0.15 },
      ]);
      const b = BROKER[p];
      const expected = [
        b.badStops,
        b.badStops,
        b.badPrice,
        b.unknownSymbol,
        b.noPosition,
        b.noPosition,
        b.noPosition,
        b.noPosition,
        b.noOrder,
        b.noOrder,
        b.noOrder,
        b.badVolume,
      ];
      for (const [i, reason] of expected.entries()) {
        expectRejected(runs[i]!, reason);
        expect(runs[i]!.bridge).toMatchObject({ status: 'rejected', replayed: false });
      }
      // The service sizes down to the symbol's volume step from hello (docs/decisions.md): 0.015 lots of EURUSD
      // (step 0.01) is an order of 0.01, so an entry never reaches the broker off its step.
      const rounded = runs[12]!;
      const ticket = expectFilled(rounded);
      expect(onlyOp(rounded)).toMatchObject({ op: 'open', ticket, volume: 0.01 });
      expect(state(acc).positions).toContainEqual(expect.objectContaining({ ticket, volume: 0.01 }));
      // US30 trades in 0.1-lot steps: 0.15 becomes 0.1. Its market closes at weekends (UTC), then the broker says so.
      const us30 = runs[13]!;
      const weekend = [0, 6].includes(new Date(us30.outcome.occurredAt).getUTCDay());
      if (weekend) {
        expectRejected(us30, p === 'mt5' ? 'broker:10018 Market is closed' : 'broker:MARKET_CLOSED Market is closed');
      } else {
        expect(onlyOp(us30)).toMatchObject({ op: 'open', ticket: expectFilled(us30), symbol: 'US30', volume: 0.1 });
      }
    });
  }, 90_000);

  test('close_all closes every position and cancels every pending order', async () => {
    await both(async (p) => {
      const acc = ACC[p];
      const before = state(acc);
      expect(before.positions.length).toBeGreaterThanOrEqual(2);
      expect(before.orders.length).toBeGreaterThanOrEqual(4);
      const r = await run(acc, { action: 'close_all' });
      expectDone(r, null);
      const closes = r.ops.filter((o) => o.op === 'close');
      const cancels = r.ops.filter((o) => o.op === 'cancel');
      expect(closes.map((o) => [o.ticket, o.volume]).sort()).toEqual(before.positions.map((x) => [x.ticket, x.volume]).sort());
      expect(cancels.map((o) => o.ticket).sort()).toEqual(before.orders.map((x) => x.ticket).sort());
      expect(r.ops).toHaveLength(closes.length + cancels.length);
      expect(r.bridge!.message).toMatch(new RegExp(`^closed ${before.positions.length} position\\(s\\) .*; cancelled ${before.orders.length} order\\(s\\) `));
      const after = state(acc);
      expect({ positions: after.positions, orders: after.orders }).toEqual({ positions: [], orders: [] });
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

  test('every action ran on both platforms', () => {
    const ran = new Map<string, Set<string>>();
    for (const line of stack!.bridge.commands()) {
      const key = String(line.accountId);
      if (!ran.has(key)) ran.set(key, new Set());
      ran.get(key)!.add(String(line.action));
    }
    const every = [...SPEC_ACTIONS];
    for (const p of PLATFORMS) expect([...(ran.get(ACC[p]) ?? [])].sort()).toEqual([...every].sort());
  });
});

const HORIZON_MS = 120_000;

/**
 * The first instant from `from` on at which a position opened at `open` is at least half a pip in profit and stays so
 * for the next 8 s, while the opposite position (opened at `otherOpen`) stays at least half a pip in loss; undefined
 * within HORIZON_MS. Computed from the deterministic paper feed.
 */
function profitWindow(symbol: string, side: Side, open: number, otherOpen: number, from: number): number | undefined {
  const margin = 0.5 * pip(symbol);
  const ok = (t: number) => {
    const q = quote(symbol, t);
    const mine = side === 'buy' ? q.bid - open : open - q.ask;
    const other = side === 'buy' ? otherOpen - q.ask : q.bid - otherOpen;
    return mine >= margin && other <= -margin;
  };
  for (let t = from; t < from + HORIZON_MS; t += 100) {
    let good = true;
    for (let u = t; u <= t + 8_000; u += 100) {
      if (!ok(u)) {
        good = false;
        t = u;
        break;
      }
    }
    if (good) return t;
  }
  return undefined;
}
