import { CURRENT_BRIDGE_VERSION } from '../../src/domain/capabilities';
import { BRIDGE_FEATURES, type BridgeFeature } from '../../src/domain/account';
import { MANAGEMENT_FIELDS } from '../../src/domain/management';
import type { BridgeCommand } from '../../src/domain/bridge-protocol';
import { pollUntilReported, post, seedOwner, startStack, type AccountSpec, type Stack } from '../helpers/stack';
import { ScriptedTerminal } from '../helpers/terminal';
import { importRegistry } from '../../src/registry/import';

/**
 * Trade management at the service (docs/trade-management.md §1-§4), over HTTP through the real ingress, worker,
 * Temporal and Redis: the fields' 400s, the 412 and the broadcast skip for a bridge that did not announce a feature,
 * the owner's defaults merged into the command with every default resolved, and `management_unsupported`.
 * The bridge is a scripted one speaking the bridge API, announcing exactly the features each case needs in its hello:
 * what the service sends is read from the commands queue as a bridge receives it.
 */

/** Every feature of the older protocols, and the five of protocol 1.6. */
const OLDER: BridgeFeature[] = ['risk_sizing', 'loss_guards', 'position_limits', 'stop_out', 'trade_events'];
const MANAGEMENT: BridgeFeature[] = BRIDGE_FEATURES.filter((f) => !OLDER.includes(f));
const MANAGEMENT_KEYS: string[] = MANAGEMENT_FIELDS;

describe('trade management at the webhook and in the command', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const url = (accountId?: string) => `${stack.ingress.url}/webhook/custom${accountId ? `/${accountId}` : ''}`;
  const buy = (secret: string, extra: Record<string, unknown> = {}) => ({ secret, action: 'buy', symbol: 'EURUSD', volume: 0.1, ...extra });

  /** An owner whose accounts' bridges said hello announcing these features; returns the fixture and the bridges. */
  async function withBridges(specs: (AccountSpec & { announce: string[] })[]) {
    const f = await seedOwner(
      stack.registry,
      specs.map(({ announce: _a, ...spec }) => spec),
    );
    const bridges = await Promise.all(
      specs.map(async (spec, i) => {
        const bridge = new ScriptedTerminal(stack.ingress.url, f.accounts[i]!.bridgeToken, 'mt5', '3.5.0', spec.announce);
        await bridge.hello();
        return bridge;
      }),
    );
    return { f, bridges };
  }

  test('when a per-account signal trails and the bridge did not announce trailing_stop, then 412 naming it, with the version to install', async () => {
    const { f } = await withBridges([{ announce: OLDER }]);
    const res = await post(url(f.accounts[0]!.id), buy(f.secret, { trailDistancePips: 15 }));
    expect(res.status).toBe(412);
    expect(res.body).toEqual({
      error: expect.stringContaining('trailing_stop'),
      correlationId: expect.any(String),
      installBridgeVersion: CURRENT_BRIDGE_VERSION.mt5,
    });
    expect(res.body.error).toMatch(/update the bridge/);
    // Every missing feature is named, and only those.
    const more = await post(url(f.accounts[0]!.id), buy(f.secret, { takeProfits: [{ tpPips: 10, closePercent: 50 }], maxSpreadPips: 2, closeOpposite: false }));
    expect(more.status).toBe(412);
    expect(more.body.error).toContain('take_profit_levels, max_spread');
    expect(more.body.error).not.toMatch(/trailing_stop|close_opposite/);
    // Without management, or with closeOpposite false (which asks for nothing), the same account takes the signal.
    expect((await post(url(f.accounts[0]!.id), buy(f.secret))).status).toBe(202);
    expect((await post(url(f.accounts[0]!.id), buy(f.secret, { closeOpposite: false }))).status).toBe(202);
  });

  test('when a broadcast trails, then the account whose bridge did not announce trailing_stop is skipped and the other runs it', async () => {
    const { f, bridges } = await withBridges([{ announce: OLDER }, { announce: ['trailing_stop'] }]);
    const res = await post(url(), buy(f.secret, { trailDistancePips: 15 }));
    expect(res.status).toBe(202);
    expect(res.body.accountsResolved).toBe(1);
    const [command] = await bridges[1]!.nextCommands(1);
    expect(command).toMatchObject({ accountId: f.accounts[1]!.id, trailDistancePips: 15, trailTriggerPips: 0, trailStepPips: 1 });
    // The skipped account's bridge gets nothing.
    expect(await bridges[0]!.commands(0)).toEqual([]);
    // With no account able to, the broadcast runs nowhere: 200 SignalNoTargets.
    const { f: g } = await withBridges([{ announce: OLDER }, { announce: [] }]);
    const none = await post(url(), buy(g.secret, { breakevenTriggerPips: 10 }));
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ success: false, accountsResolved: 0 });
  });

  test('when the operator re-imports the registry under connected bridges, then what they announced in hello still decides', async () => {
    // The document says bridge 2.0.0 with no features (as demo/registry.json does); the bridges said 3.5.0 and trailing_stop.
    const { f, bridges } = await withBridges([{ announce: ['trailing_stop'] }, { announce: ['trailing_stop'] }]);
    await importRegistry(stack.registry, f.doc);
    expect(await stack.registry.getAccount(f.accounts[0]!.id)).toMatchObject({ bridgeVersion: '3.5.0', bridgeFeatures: ['trailing_stop'] });

    const one = await post(url(f.accounts[0]!.id), buy(f.secret, { trailDistancePips: 10 }));
    expect(one.status).toBe(202);
    const all = await post(url(), buy(f.secret, { trailDistancePips: 10 }));
    expect(all.status).toBe(202);
    expect(all.body.accountsResolved).toBe(2);
    const [first, second] = await bridges[0]!.nextCommands(2);
    expect([first, second]).toEqual([
      expect.objectContaining({ signalId: one.body.signalId, trailDistancePips: 10 }),
      expect.objectContaining({ signalId: all.body.signalId, trailDistancePips: 10 }),
    ]);
    expect(await bridges[1]!.nextCommands(1)).toEqual([expect.objectContaining({ signalId: all.body.signalId, trailDistancePips: 10 })]);
  });

  test.each([
    [
      {
        takeProfits: [
          { tpPips: 10, closePercent: 50 },
          { tpPips: 20, closePercent: 0 },
        ],
      },
      'takeProfits.1.closePercent',
    ],
    [
      {
        takeProfits: [
          { tpPips: 10, closePercent: 60 },
          { tpPips: 20, closePercent: 50 },
        ],
      },
      'takeProfits',
    ],
    [{ takeProfits: [{ tpPips: 10, tp: 1.2, closePercent: 50 }] }, 'takeProfits.0.tp'],
    [{ tpPips: 15, takeProfits: [{ tpPips: 20, closePercent: 50 }] }, 'takeProfits.0.tpPips'],
    [{ trailTriggerPips: 5 }, 'trailTriggerPips'],
    [{ trailDistancePips: 0 }, 'trailDistancePips'],
    [{ breakevenTriggerPips: 5, breakevenOffsetPips: 5 }, 'breakevenOffsetPips'],
    [{ maxSpreadPips: '2' }, 'maxSpreadPips'],
  ])('when a buy carries %j, then 400 naming %s (before any bridge check)', async (extra, path) => {
    const { f } = await withBridges([{ announce: [] }]);
    const res = await post(url(f.accounts[0]!.id), buy(f.secret, extra));
    expect(res.status).toBe(400);
    expect(res.body.details).toContainEqual({ path, message: expect.any(String) });
    expect(res.body.error).toContain(`${path}: `);
  });

  test('when a pending entry carries closeOpposite, then 400: it is for market entries only', async () => {
    const { f } = await withBridges([{ announce: MANAGEMENT }]);
    const res = await post(url(f.accounts[0]!.id), { secret: f.secret, action: 'buy_limit', symbol: 'EURUSD', volume: 0.1, price: 1.05, closeOpposite: true });
    expect(res.status).toBe(400);
    expect(res.body.details).toContainEqual({ path: 'closeOpposite', message: 'closeOpposite is not used by buy_limit' });
  });

  test("when a buy with management reaches a capable bridge, then its command carries the fields resolved, with the owner's defaults merged", async () => {
    const { f, bridges } = await withBridges([
      { announce: [...OLDER, ...MANAGEMENT], risk: { management: { breakevenTriggerPips: 12, maxSpreadPips: 3, trailDistancePips: 40 } } as never },
    ]);
    const takeProfits = [
      { tpPips: 20, closePercent: 50 },
      { tpPips: 40, closePercent: 25 },
    ];
    const res = await post(
      url(f.accounts[0]!.id),
      buy(f.secret, { slPips: 20, tpPips: 60, trailDistancePips: 15, maxSpreadPips: 2, takeProfits, closeOpposite: true }),
    );
    expect(res.status).toBe(202);
    const [command] = await bridges[0]!.nextCommands(1);
    const management = Object.fromEntries(Object.entries(command!).filter(([k]) => MANAGEMENT_KEYS.includes(k)));
    // The signal's own trail replaces the default's (40), with trigger 0 and step 1 filled in; the default's breakeven
    // applies with offset 0; the tighter spread wins.
    expect(management).toEqual({
      trailDistancePips: 15,
      trailTriggerPips: 0,
      trailStepPips: 1,
      breakevenTriggerPips: 12,
      breakevenOffsetPips: 0,
      takeProfits,
      closeOpposite: true,
      maxSpreadPips: 2,
    });
    expect(command).toMatchObject({ action: 'buy', symbol: 'EURUSD', volume: 0.1, slPips: 20, tpPips: 60 });
    await bridges[0]!.report([{ commandId: command!.commandId, status: 'filled', ticket: '9101', price: 1.0801, volume: 0.1 }]);
    const status = await pollUntilReported(stack.ingress.url, res.body.signalId, f.token);
    expect(status.accounts[0]).toMatchObject({ outcome: 'filled', ticket: '9101' });
  });

  test('when an entry asks for no management and the owner has no defaults, then its command has no management field at all', async () => {
    const { f, bridges } = await withBridges([{ announce: [...OLDER, ...MANAGEMENT] }]);
    expect((await post(url(f.accounts[0]!.id), buy(f.secret, { closeOpposite: false }))).status).toBe(202);
    const [command] = await bridges[0]!.nextCommands(1);
    expect(Object.keys(command!).filter((k) => MANAGEMENT_KEYS.includes(k))).toEqual([]);
    expect((command as BridgeCommand & { meta?: unknown }).meta).toBeUndefined();
  });

  test("when the owner's defaults trail and the bridge did not announce trailing_stop, then entries are refused management_unsupported; exits still run", async () => {
    const { f, bridges } = await withBridges([{ announce: OLDER, risk: { management: { trailDistancePips: 25 } } as never }]);
    // The caller asked for nothing the bridge lacks: accepted at the door, refused by the owner's rules.
    const res = await post(url(f.accounts[0]!.id), buy(f.secret));
    expect(res.status).toBe(202);
    const status = await pollUntilReported(stack.ingress.url, res.body.signalId, f.token);
    expect(status.accounts[0]).toMatchObject({ outcome: 'rejected', reason: 'management_unsupported' });
    const exit = await post(url(f.accounts[0]!.id), { secret: f.secret, action: 'close_all' });
    expect(exit.status).toBe(202);
    expect((await bridges[0]!.nextCommands(1)).map((c) => c.action)).toEqual(['close_all']);
  });
});
