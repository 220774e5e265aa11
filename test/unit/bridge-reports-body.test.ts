import { reportsBodySchema } from '../../src/domain/bridge-protocol';
import { tradesBodySchema } from '../../src/domain/trade-events';

/** The body of POST /bridge/v1/reports (protocol 1.2): reports, the account's figures with them, or figures alone. */
describe('the reports body', () => {
  const report = { commandId: 'signal/sig_0123456789abcdefghij/account/acc-1', status: 'filled', ticket: '7' };
  const account = { balance: 10_000, equity: 9_990, margin: 1_080, freeMargin: 8_910, currency: 'USD' };

  test('when it holds reports, with or without figures, then it is valid', () => {
    expect(reportsBodySchema.safeParse({ reports: [report] }).success).toBe(true);
    expect(reportsBodySchema.safeParse({ reports: [report], account }).success).toBe(true);
  });

  test('when it holds figures and no report (a heartbeat), then it is valid; with neither, it is refused', () => {
    expect(reportsBodySchema.safeParse({ reports: [], account }).success).toBe(true);
    const empty = reportsBodySchema.safeParse({ reports: [] });
    expect(empty.success).toBe(false);
    expect(empty.error?.issues[0]?.message).toBe('send at least one report, an event, or the account figures (a heartbeat)');
  });

  test('when the figures are incomplete, not finite or carry unknown fields, then the body is refused', () => {
    for (const bad of [
      { balance: 1, equity: 1 },
      { ...account, equity: Number.POSITIVE_INFINITY },
      { ...account, currency: '' },
      { ...account, leverage: 100 },
    ]) {
      expect(reportsBodySchema.safeParse({ reports: [], account: bad }).success).toBe(false);
    }
  });

  test("when a ticket takes the trade journal's own form order:…, then the report, the event and the book are refused naming it", () => {
    const message = "must not begin with order: (the trade journal's own form for pending orders)";
    const issues = (r: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } }) =>
      (r.error?.issues ?? []).map((i) => ({ path: i.path.join('.'), message: i.message }));
    expect(issues(reportsBodySchema.safeParse({ reports: [{ ...report, ticket: 'order:999' }] }))).toEqual([{ path: 'reports.0.ticket', message }]);
    const at = new Date().toISOString();
    const opened = { eventId: 'e1', at, ticket: 'order:999', symbol: 'EURUSD', type: 'position_opened', side: 'buy', volume: 0.1, price: 1.1 };
    expect(issues(tradesBodySchema.safeParse({ events: [opened] }))).toContainEqual({ path: 'events.0.ticket', message });
    expect(tradesBodySchema.safeParse({ events: [{ ...opened, ticket: '999' }] }).success).toBe(true);
    const position = {
      ticket: 'order:5',
      symbol: 'EURUSD',
      side: 'buy',
      volume: 0.1,
      openPrice: 1.1,
      sl: null,
      tp: null,
      openedAt: at,
      profit: 0,
      swap: 0,
      commission: 0,
    };
    expect(issues(tradesBodySchema.safeParse({ book: { takenAt: at, truncated: false, positions: [position], orders: [] } }))).toContainEqual({
      path: 'book.positions.0.ticket',
      message,
    });
  });

  test('when there are more than 100 reports, then it is refused', () => {
    expect(reportsBodySchema.safeParse({ reports: Array.from({ length: 101 }, () => report) }).success).toBe(false);
  });
});
