import { RedisTradeJournal } from '../../src/trades/journal';
import type { TradeRecord } from '../../src/domain/trade-events';
import { waitFor } from '../../support/infra';
import { post, seedOwner, startStack, type Fixture, type Stack } from '../helpers/stack';
import { reportedStatus } from '../helpers/poll';
import { MT5_BRIDGE_VERSION, Mt5BridgeDriver } from '../conformance/mt5-driver';

/**
 * The MT5 bridge (bridges/mt5, its own Python process on the MetaTrader5 double) against the real service (ingress
 * and worker against the run's Temporal and Redis): signals go out as orders, the double's trade server then hits the
 * SL or TP, fills a pending order or takes the trader's close by hand on a quote move, and the bridge's trade events
 * (protocol 1.5) land in the trade journal, linked to the signal, with the cause and the P&L.
 */

describe('the MT5 bridge reports what became of each trade', () => {
  let stack: Stack;
  let fixture: Fixture;
  let journal: RedisTradeJournal;
  const driver = new Mt5BridgeDriver();
  const accountId = () => fixture.accounts[0]!.id;

  beforeAll(async () => {
    stack = await startStack();
    journal = new RedisTradeJournal(stack.redis);
    fixture = await seedOwner(stack.registry, [{ platform: 'mt5', bridgeVersion: MT5_BRIDGE_VERSION }]);
    await driver.start({ id: accountId(), platform: 'mt5', bridgeToken: fixture.accounts[0]!.bridgeToken }, stack.ingress.url);
  }, 120_000);

  afterAll(async () => {
    await driver.cleanup();
    await stack?.stop();
  });

  const submit = async (body: Record<string, unknown>): Promise<{ signalId: string; ticket: string }> => {
    const res = await post(`${stack.ingress.url}/webhook/custom/${accountId()}`, { secret: fixture.secret, ...body });
    expect(res.status).toBe(202);
    const signalId = res.body.signalId as string;
    const outcome = (await reportedStatus(stack.ingress.url, fixture.token, signalId, { deadlineMs: 20_000 })).accounts[0];
    expect(outcome).toMatchObject({ outcome: 'filled' });
    return { signalId, ticket: outcome!.ticket as string };
  };

  const eurusd = (bid: number) => driver.setQuote(accountId(), 'EURUSD', { bid, ask: Number((bid + 0.0001).toFixed(5)) });

  /** The journal's trade once `done` says it is as expected (the bridge looks at the terminal every second). */
  const trade = (tradeId: string, what: string, done: (t: TradeRecord) => boolean) =>
    waitFor(
      `trade ${tradeId} ${what}`,
      async () => {
        const [raw] = await journal.readRaw(accountId(), [tradeId]);
        const t = raw ? (JSON.parse(raw) as TradeRecord) : undefined;
        return t && done(t) ? t : undefined;
      },
      20_000,
      100,
    );

  test('when a buy with SL and TP is filled and the price reaches the TP, then the journal shows it closed by take profit with its P&L, linked to the signal', async () => {
    const { signalId, ticket } = await submit({ action: 'buy', symbol: 'EURUSD', volume: 0.1, sl: 1.08, tp: 1.087 });
    const open = await trade(ticket, 'open', (t) => t.status === 'open');
    expect(open).toMatchObject({ origin: 'signal', signalId, side: 'buy', openPrice: 1.0851, volume: 0.1, sl: 1.08, tp: 1.087 });
    await eurusd(1.0875);
    const closed = await trade(ticket, 'closed', (t) => t.status === 'closed');
    // 0.1 lot from 1.0851 to 1.0875: 24 pips of 1 USD.
    expect(closed).toMatchObject({ closeCause: 'take_profit', closePrice: 1.0875, realizedProfit: 24, volume: 0, closedVolume: 0.1 });
  });

  test('when the price falls through the SL, then the trade is closed by stop loss at the price that reached it', async () => {
    const { ticket } = await submit({ action: 'buy', symbol: 'EURUSD', volume: 0.2, sl: 1.086 });
    await trade(ticket, 'open', (t) => t.status === 'open');
    await eurusd(1.0855);
    // Bought at the ask 1.0876, closed at the bid 1.0855: 21 pips of 2 USD lost.
    expect(await trade(ticket, 'closed', (t) => t.status === 'closed')).toMatchObject({ closeCause: 'stop_loss', closePrice: 1.0855, realizedProfit: -42 });
  });

  test('when a buy limit is reached and the trader then closes the position by hand, then the trade shows placed, triggered and closed manually', async () => {
    const { signalId, ticket } = await submit({ action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.084 });
    const pending = await trade(`order:${ticket}`, 'pending', (t) => t.status === 'pending');
    expect(pending).toMatchObject({ origin: 'signal', signalId, orderType: 'limit', orderPrice: 1.084 });
    await eurusd(1.0838);
    // On a hedging account the position's ticket is the order's.
    const open = await trade(ticket, 'open', (t) => t.status === 'open');
    expect(open).toMatchObject({ signalId, orderTicket: ticket, openPrice: 1.0839 });
    await driver.manualClose(accountId(), ticket);
    const closed = await trade(ticket, 'closed by hand', (t) => t.status === 'closed');
    expect(closed).toMatchObject({ closeCause: 'manual', closePrice: 1.0838, realizedProfit: -1 });
    expect(closed.events.map((e) => e.type)).toEqual(['order_placed', 'order_triggered', 'position_opened', 'position_closed']);
  });

  test('when a pending order is given an expiry by a signal and the expiry passes, then the journal shows it modified by that signal and expired', async () => {
    const { ticket } = await submit({ action: 'sell_limit', symbol: 'EURUSD', volume: 0.1, price: 1.095 });
    await trade(`order:${ticket}`, 'pending', (t) => t.status === 'pending');
    const res = await post(
      `${stack.ingress.url}/webhook/custom/${accountId()}`,
      { secret: fixture.secret, action: 'modify_pending_expiry', orderId: ticket, expiry: new Date(Date.now() + 3_000).toISOString() },
      { 'x-idempotency-key': `k-${ticket}-expiry` },
    );
    expect(res.status).toBe(202);
    // An exit is not in the poll (docs/poll.md): the journal says what became of it.
    const modify = res.body.signalId as string;
    const expired = await trade(`order:${ticket}`, 'expired', (t) => t.status === 'expired');
    expect(expired.linkedSignals).toContain(modify);
    expect(expired.events.map((e) => e.type)).toEqual(['order_placed', 'order_modified', 'order_expired']);
  });

  test('when a position is open, then the book the service keeps lists it as the terminal does', async () => {
    const { ticket } = await submit({ action: 'sell', symbol: 'EURUSD', volume: 0.3, tp: 1.07 });
    const book = await waitFor(
      'the book listing the sell',
      async () => {
        const b = await journal.book(accountId());
        return b?.positions.some((p) => p.ticket === ticket) ? b : undefined;
      },
      20_000,
      100,
    );
    expect(book.truncated).toBe(false);
    expect(book.positions).toEqual([expect.objectContaining({ ticket, symbol: 'EURUSD', side: 'sell', volume: 0.3, openPrice: 1.0838, sl: null, tp: 1.07 })]);
    expect(book.orders).toEqual([]);
  });
});
