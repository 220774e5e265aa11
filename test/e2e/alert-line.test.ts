import type { BridgeCommand } from '../../src/domain/bridge-protocol';
import type { LedgerEntry, MemoryLedger } from '../../src/paper/ledger';
import type { PaperTerminal } from '../../src/paper/terminal';
import { ScriptedTerminal } from '../helpers/terminal';
import { pollUntilReported, post, seedOwner, startPaperTerminal, startStack, type Stack } from '../helpers/stack';

/**
 * A one-line alert end to end, in the service's own process (ingress and worker on the run's Temporal and Redis): the
 * line posted as TradingView posts it (text/plain) becomes the same bridge command as its JSON twin, and on the paper
 * bridge (EURUSD 1.08000/1.08010) the same fill.
 */

const asTradingView = (url: string, text: string, headers: Record<string, string> = {}) =>
  post(url, text, { 'content-type': 'text/plain; charset=utf-8', ...headers });

/** A command without what names this one signal (its ids, its place in the account's order, its clock). */
function order(command: BridgeCommand): Record<string, unknown> {
  const { commandId: _c, signalId: _s, seq: _q, acceptedAt: _a, expiresAt: _e, ...rest } = command as BridgeCommand & Record<string, unknown>;
  return rest;
}

describe('a one-line alert end to end', () => {
  let stack: Stack;
  const terminals: PaperTerminal[] = [];
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await Promise.all(terminals.map((t) => t.stop()));
    await stack?.stop();
  });

  test('when a buy is sent as a line and as JSON, then the bridge gets the same command; the header key replays the line like JSON', async () => {
    const f = await seedOwner(stack.registry);
    const account = f.accounts[0]!;
    const terminal = new ScriptedTerminal(stack.ingress.url, account.bridgeToken);
    await terminal.hello();
    const url = `${stack.ingress.url}/webhook/custom/${account.id}`;

    const json = await post(url, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 20, tpPips: 40, meta: { origin: 'tv' } });
    expect(json.status).toBe(202);
    const [fromJson] = await terminal.nextCommands(1);

    const line = `${f.secret},buy,EURUSD,vol_lots=0.1,SLPIPS=20,tp_pips=40,origin=tv`;
    const first = await asTradingView(url, line, { 'x-idempotency-key': 'line-1' });
    expect(first.status).toBe(202);
    const [fromLine] = await terminal.nextCommands(1);
    expect(fromLine!.signalId).toBe(first.body.signalId);
    expect(order(fromLine!)).toEqual(order(fromJson!));
    expect(order(fromLine!)).toMatchObject({ action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 20, tpPips: 40 });

    // TradingView's resend of the same line, and the same line with the key written in it: the first answer, no new action.
    const resend = await asTradingView(url, line, { 'x-idempotency-key': 'line-1' });
    expect({ status: resend.status, replayed: resend.headers.get('idempotent-replayed'), signalId: resend.body.signalId }).toEqual({
      status: 202,
      replayed: 'true',
      signalId: first.body.signalId,
    });
    const inLine = await asTradingView(url, `${line},idempotencyKey=line-1`);
    expect({ status: inLine.status, signalId: inLine.body.signalId }).toEqual({ status: 202, signalId: first.body.signalId });
    // A different line under the same key is refused, as a different JSON body would be.
    const other = await asTradingView(url, `${f.secret},buy,EURUSD,volume=0.2`, { 'x-idempotency-key': 'line-1' });
    expect({ status: other.status, error: other.body.error }).toEqual({ status: 400, error: expect.stringMatching(/already used with a different request/) });
    expect(await terminal.commands(500)).toEqual([]);
  });

  test('when a buy is sent as a line and as JSON to the paper bridge, then both fill alike: same price, lots and stops', async () => {
    const f = await seedOwner(stack.registry);
    const account = f.accounts[0]!;
    const { terminal } = await startPaperTerminal(stack, account);
    terminals.push(terminal);
    const url = `${stack.ingress.url}/webhook/custom/${account.id}`;

    const json = await post(url, { secret: f.secret, action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 20, tpPips: 40 });
    expect(json.status).toBe(202);
    const jsonStatus = await pollUntilReported(stack.ingress.url, json.body.signalId, f.token, 1, 20_000);
    const line = await asTradingView(url, `${f.secret},buy,EURUSD,volume=0.1,slpips=20,tppips=40`);
    expect(line.status).toBe(202);
    const lineStatus = await pollUntilReported(stack.ingress.url, line.body.signalId, f.token, 1, 20_000);

    const item = (status: { accounts: Record<string, unknown>[] }) => {
      const { ticket: _t, occurredAt: _o, ...rest } = status.accounts[0]!;
      return rest;
    };
    expect(item(lineStatus)).toEqual(item(jsonStatus));
    expect(item(lineStatus)).toMatchObject({ outcome: 'filled', entry: 'position', fill: { price: 1.0801, volume: 0.1 } });

    const opens = (terminal.ledger as MemoryLedger).entries.filter((e) => e.op === 'open');
    expect(opens).toHaveLength(2);
    const fill = (e: LedgerEntry) => {
      const { time: _t, commandId: _c, ticket: _k, deal: _d, ...rest } = e as LedgerEntry & Record<string, unknown>;
      return rest;
    };
    expect(fill(opens[1]!)).toEqual(fill(opens[0]!));
    // The stops the broker holds: 20 and 40 pips from the 1.0801 fill.
    expect(opens[1]).toMatchObject({ symbol: 'EURUSD', side: 'buy', volume: 0.1, price: 1.0801, sl: 1.0781, tp: 1.0841 });
  });
});
