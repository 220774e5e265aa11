import path from 'node:path';
import { ensureBuilt, serviceEnv, startProcessStack, type ProcessStack } from '../../support/processes';
import {
  commandIdOf,
  httpPost,
  importRegistry,
  makeRegistry,
  ordersByCommand,
  pollUntilReported,
  scenarioDir,
  temporalClient,
  waitForOrders,
  writeRegistryFile,
  type TemporalView,
} from './kit';
import { MARKET_FILL } from '../helpers/poll-items';
import { workflowResult } from '../helpers/temporal';

/**
 * Fault injection at the terminal: the paper bridge places the order and then loses its connection before it can
 * report (PAPER_FAULT=drop-before-report:<n>@<account>, the paper bridge's own fault hook, here through --fault). It
 * reconnects with a new hello, the ingress hands the unreported command out again, and the terminal must answer from
 * its journal instead of trading twice.
 */

const reg = makeRegistry('drop', 2);
const [mt5, ctrader] = reg.accounts as [(typeof reg.accounts)[0], (typeof reg.accounts)[0]];
/** Each terminal drops its first report batch (PAPER_FAULT=drop-before-report:1@<account>). */
const DROPS = 1;
describe('the bridge drops its connection after placing an order and before reporting', () => {
  let stack: ProcessStack | undefined;
  let temporal: TemporalView | undefined;
  let ledgerFile: string;

  beforeAll(async () => {
    ensureBuilt();
    const dir = scenarioDir(reg.tag);
    ledgerFile = path.join(dir, 'ledger.jsonl');
    const registryFile = writeRegistryFile(dir, 'registry.json', reg);
    await importRegistry(registryFile, serviceEnv());
    stack = await startProcessStack({
      registryFile,
      ledgerFile,
      bridgeArgs: ['--fault', `drop-before-report:${DROPS}@${mt5.id},drop-before-report:${DROPS}@${ctrader.id}`],
    });
    temporal = await temporalClient();
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await temporal?.close();
  });

  async function broadcastAndSettle(signal: Record<string, unknown>) {
    const describeAll = () =>
      stack!
        .all()
        .map((p) => p.describe())
        .join('\n');
    const res = await httpPost(`${stack!.ingress.url}/webhook/custom`, { secret: reg.secret, ...signal });
    expect(res.status).toBe(202);
    expect(res.body.accountsResolved).toBe(2);
    const signalId = res.body.signalId as string;
    await waitForOrders(
      ledgerFile,
      reg.accounts.map((a) => commandIdOf(signalId, a.id)),
      20_000,
      describeAll,
    );
    const outcomes = await pollUntilReported(() => stack!.ingress.url, reg.token, [signalId], { count: 2, deadlineMs: 30_000, describe: describeAll });
    return { signalId, byAccount: new Map(outcomes.get(signalId)!.accounts.map((o) => [o.accountId, o])) };
  }

  test(
    'when a market buy is broadcast and each terminal drops its connection after placing the order and before reporting, ' +
      'then it reconnects, answers the redelivery from its journal, and each account has exactly one order, filled with that ticket',
    async () => {
      const { signalId, byAccount } = await broadcastAndSettle({ action: 'buy', symbol: 'EURUSD', volume: 0.1 });
      const orders = ordersByCommand(ledgerFile);
      for (const account of [mt5, ctrader]) {
        const commandId = commandIdOf(signalId, account.id);
        // Exactly one order at the broker for the command, although it was handed out twice.
        const lines = orders.get(commandId)!;
        expect(lines.map((l) => ({ op: l.op, accountId: l.accountId, side: l.side, volume: l.volume }))).toEqual([
          { op: 'open', accountId: account.id, side: 'buy', volume: 0.1 },
        ]);
        const ticket = lines[0]!.ticket;
        expect(byAccount.get(account.id)).toEqual({
          accountId: account.id,
          outcome: 'filled',
          ticket,
          reason: null,
          occurredAt: expect.any(String),
          ...MARKET_FILL,
        });
        expect(await workflowResult(temporal!.client, commandId, 60_000)).toMatchObject({ accountId: account.id, outcome: 'filled', ticket });
        // The terminal executed it once, dropped the report, said hello again, and answered the redelivery from its
        // journal with the same ticket.
        expect(
          stack!.bridge
            .commands()
            .filter((c) => c.commandId === commandId)
            .map((c) => ({ replayed: c.replayed, ticket: c.ticket, status: c.status })),
        ).toEqual([
          { replayed: false, ticket, status: 'filled' },
          { replayed: true, ticket, status: 'filled' },
        ]);
        const events = stack!.bridge.jsonLines('stderr').filter((l) => l.accountId === account.id);
        expect(events.filter((l) => l.event === 'fault_drop_before_report').map((l) => l.commandIds)).toEqual([[commandId]]);
        expect(events.filter((l) => l.event === 'hello')).toHaveLength(2);
      }
    },
    60_000,
  );

  test('when a pending buy_limit follows, with the faults used up, then each account places exactly one order, filled with its order ticket', async () => {
    const { signalId, byAccount } = await broadcastAndSettle({ action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.0 });
    const orders = ordersByCommand(ledgerFile);
    for (const account of [mt5, ctrader]) {
      const lines = orders.get(commandIdOf(signalId, account.id))!;
      expect(lines.map((l) => ({ op: l.op, accountId: l.accountId, side: l.side }))).toEqual([{ op: 'place', accountId: account.id, side: 'buy' }]);
      expect(byAccount.get(account.id)).toMatchObject({ outcome: 'filled', ticket: lines[0]!.ticket });
    }
  }, 60_000);

  test('when both signals are done, then the ledger holds exactly one order per (signal, account) and nothing else', () => {
    const orders = ordersByCommand(ledgerFile);
    expect([...orders.values()].map((l) => l.length)).toEqual([1, 1, 1, 1]);
    expect(stack!.bridge.jsonLines('stderr').filter((l) => l.event === 'fault_drop_before_report')).toHaveLength(2 * DROPS);
  });
});
