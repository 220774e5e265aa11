import { accountRunsQuery, keyword, signalParentsQuery, UnqueryableValue } from '../../src/temporal/visibility-query';
import { decodePageToken, encodePageToken, parseSignalLogQuery, SIGNAL_LOG_MAX_PAGE } from '../../src/signals/log-filters';
import { Refusal } from '../../src/refusal';

describe('the visibility queries of the owner signal log', () => {
  test('when a value holds a single quote, then it is escaped and stays one literal', () => {
    expect(keyword("o'neil")).toBe("'o\\'neil'");
    const q = accountRunsQuery({ ownerId: "x' OR OwnerId != 'y" }, 'closed');
    expect(q).toContain("OwnerId = 'x\\' OR OwnerId != \\'y'");
  });

  test.each(['a"b', 'a\\b', 'a\nb', '', 'x'.repeat(257)])('when a value is %j, then it is refused, never sent', (value) => {
    expect(() => keyword(value)).toThrow(UnqueryableValue);
    expect(() => accountRunsQuery({ ownerId: value }, 'running')).toThrow(UnqueryableValue);
  });

  test('when every filter and a position are given, then each is one term, ANDed with the owner and the section', () => {
    const q = accountRunsQuery(
      {
        ownerId: 'owner-1',
        accountId: 'acc-1',
        action: 'buy',
        symbol: 'EURUSD',
        outcome: 'rejected',
        from: new Date('2026-11-01T00:00:00Z'),
        to: new Date('2026-11-02T00:00:00Z'),
      },
      'closed',
      { receivedAt: new Date('2026-11-01T12:00:00.123Z'), signalId: 'sig_abcdefghijklmnopqrstu' },
    );
    expect(q).toBe(
      [
        "WorkflowType = 'accountWorkflow'",
        "OwnerId = 'owner-1'",
        "AccountId = 'acc-1'",
        "Action = 'buy'",
        "Symbol = 'EURUSD'",
        "Outcome = 'rejected'",
        "ReceivedAt >= '2026-11-01T00:00:00.000Z'",
        "ReceivedAt < '2026-11-02T00:00:00.000Z'",
        "(ReceivedAt < '2026-11-01T12:00:00.123Z' OR (ReceivedAt = '2026-11-01T12:00:00.123Z' AND SignalId < 'sig_abcdefghijklmnopqrstu'))",
        "ExecutionStatus != 'Running'",
      ].join(' AND '),
    );
  });

  test('when the outcome is pending, then it is every account workflow not completed', () => {
    expect(accountRunsQuery({ ownerId: 'o', outcome: 'pending' }, 'running')).toBe(
      "WorkflowType = 'accountWorkflow' AND OwnerId = 'o' AND ExecutionStatus != 'Completed' AND ExecutionStatus = 'Running'",
    );
  });

  test("when the parents' memos are read, then only this owner's parents of those signals", () => {
    expect(signalParentsQuery('o', ['sig_a', 'sig_b'])).toBe("WorkflowType = 'signalWorkflow' AND OwnerId = 'o' AND SignalId IN ('sig_a', 'sig_b')");
  });
});

describe('the filters and the page token of the owner signal log', () => {
  const invalid = (input: unknown) => {
    try {
      parseSignalLogQuery(input);
    } catch (err) {
      return err instanceof Refusal && err.kind === 'invalid';
    }
    return false;
  };

  test('when nothing is given, then a default page of 25', () => {
    expect(parseSignalLogQuery(undefined)).toEqual({ pageSize: 25 });
  });

  test('when query parameters come as text, then the page size is read as a number', () => {
    expect(parseSignalLogQuery({ pageSize: '10', outcome: 'pending', from: '2026-11-01T00:00:00Z' })).toEqual({
      pageSize: 10,
      outcome: 'pending',
      from: new Date('2026-11-01T00:00:00Z'),
    });
  });

  test.each([
    { pageSize: SIGNAL_LOG_MAX_PAGE + 1 },
    { pageSize: 0 },
    { pageSize: '1e9' },
    { accountId: "acc' OR 'x" },
    { symbol: 'EUR"USD' },
    { action: 'sell_everything' },
    { outcome: 'lost' },
    { from: 'yesterday' },
    { from: '2026-11-02T00:00:00Z', to: '2026-11-01T00:00:00Z' },
    { ownerId: 'someone-else' },
    { pageToken: 'x'.repeat(201) },
  ])('when the query is %j, then it is refused as invalid', (input) => {
    expect(invalid(input)).toBe(true);
  });

  test('when a token this log issued comes back, then it is the same position', () => {
    const position = { receivedAt: new Date('2026-11-25T12:00:00.001Z'), signalId: 'sig_0123456789abcdefghij' };
    expect(decodePageToken(encodePageToken(position))).toEqual(position);
  });

  test.each(['not-base64-json', Buffer.from('{"r":"2026-11-25T12:00:00Z","s":"x\' OR 1=1"}').toString('base64url'), Buffer.from('[]').toString('base64url')])(
    'when the token %j is not ours, then it is refused as invalid',
    (token) => {
      expect(() => decodePageToken(token)).toThrow(Refusal);
    },
  );
});
