import type { PaperTerminal } from '../../src/paper/terminal';
import { pollUntilReported, post, seedOwner, startPaperTerminal, startStack, type Stack } from '../helpers/stack';

/**
 * The poll's additive `entry` and `fill` end to end (docs/poll.md): the real ingress, worker, Temporal and Redis, and
 * the paper bridge (EURUSD 1.08000/1.08010) reporting what it placed.
 */
describe('the poll says what an entry became', () => {
  let stack: Stack;
  const terminals: PaperTerminal[] = [];
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await Promise.all(terminals.map((t) => t.stop()));
    await stack?.stop();
  });

  async function send(signal: Record<string, unknown>) {
    const f = await seedOwner(stack.registry);
    const { terminal } = await startPaperTerminal(stack, f.accounts[0]!);
    terminals.push(terminal);
    const res = await post(`${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`, { secret: f.secret, symbol: 'EURUSD', volume: 0.1, ...signal });
    expect(res.status).toBe(202);
    const status = await pollUntilReported(stack.ingress.url, res.body.signalId, f.token, 1, 20_000);
    return { accountId: f.accounts[0]!.id, status };
  }

  test('when a market buy fills, then its item is a position with the fill price and lots, beside the spec fields', async () => {
    const { accountId, status } = await send({ action: 'buy' });
    expect(status.accounts).toEqual([
      {
        accountId,
        outcome: 'filled',
        ticket: expect.stringMatching(/^\d+$/),
        reason: null,
        occurredAt: expect.any(String),
        entry: 'position',
        fill: { price: 1.0801, volume: 0.1 },
      },
    ]);
  });

  test('when a buy_limit is placed, then its item is an order with no fill', async () => {
    const { accountId, status } = await send({ action: 'buy_limit', price: 1.07 });
    expect(status.accounts).toEqual([
      { accountId, outcome: 'filled', ticket: expect.stringMatching(/^\d+$/), reason: null, occurredAt: expect.any(String), entry: 'order' },
    ]);
  });

  test('when the bridge rejects an entry, then its item is the spec item alone: no entry, no fill', async () => {
    // A buy limit above the ask is refused by the broker.
    const { accountId, status } = await send({ action: 'buy_limit', price: 1.09 });
    expect(status.accounts).toEqual([
      { accountId, outcome: 'rejected', ticket: null, reason: expect.stringMatching(/^broker:/), occurredAt: expect.any(String) },
    ]);
  });
});
