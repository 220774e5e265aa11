import { SPEC_LIMITS } from '../../src/domain/limits';
import { waitFor } from '../../support/infra';
import { post, seedOwner, startStack, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';

/**
 * The replay window at its edges on the default settings (spec §5: 45 s from acceptance), over HTTP against the real
 * stack: no tuning of the window here. The first acceptance happens between the first request's send and its answer,
 * so the 44 s retry is timed from the send (it lands at most 44 s plus its own latency after acceptance) and the 46 s
 * one from the answer (it lands at least 46 s after). The wall clock is the condition, so the waits are on it.
 */
const WINDOW_MS = SPEC_LIMITS.replayWindowMs;
const INSIDE_MS = WINDOW_MS - 1_000;
const OUTSIDE_MS = WINDOW_MS + 1_000;

/** Resolves when the wall clock reaches `instant` (ms since the epoch), bounded by a deadline just past it. */
const untilClock = (what: string, instant: number) =>
  waitFor(what, async () => (Date.now() >= instant ? true : undefined), Math.max(instant - Date.now(), 0) + 2_000, 20);

describe('the idempotency window on its default settings (45 s)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  test('a retry at 44 s is the same action (one command at the bridge), one at 46 s is a new one', async () => {
    expect(stack.config.ingress.idempotencyWindowMs).toBe(45_000);
    const f = await seedOwner(stack.registry);
    const terminal = new ScriptedTerminal(stack.ingress.url, f.accounts[0]!.bridgeToken);
    await terminal.hello();
    const url = `${stack.ingress.url}/webhook/custom/${f.accounts[0]!.id}`;
    const body = { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.2 };
    const key = { 'x-idempotency-key': 'edge-of-window' };

    const sentAt = Date.now();
    const first = await post(url, body, key);
    const answeredAt = Date.now();
    expect(first.status).toBe(202);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const [command] = await terminal.nextCommands(1);
    expect(command!.signalId).toBe(first.body.signalId);
    await terminal.report([{ commandId: command!.commandId, status: 'filled', ticket: '1' }]);

    await untilClock('44 s after the first send', sentAt + INSIDE_MS);
    const inside = await post(url, body, key);
    expect(Date.now() - sentAt).toBeLessThan(WINDOW_MS); // the premise: it landed inside
    expect(inside.status).toBe(202);
    expect(inside.headers.get('idempotent-replayed')).toBe('true');
    expect(inside.body).toEqual(first.body);

    await untilClock('46 s after the first answer', answeredAt + OUTSIDE_MS);
    const outside = await post(url, body, key);
    expect(outside.status).toBe(202);
    expect(outside.headers.get('idempotent-replayed')).toBeNull();
    expect(outside.body.signalId).not.toBe(first.body.signalId);

    // The bridge saw the first action once (the 44 s retry queued nothing), then the 46 s one.
    const commands = await terminal.nextCommands(1);
    expect(commands.map((c) => c.signalId)).toEqual([outside.body.signalId]);
  }, 70_000);
});
