import { CAPABILITIES, CURRENT_BRIDGE_VERSION } from '../../src/domain/capabilities';
import { post, seedOwner, startStack, type Stack } from '../helpers/stack';

/**
 * The modify_pending family over HTTP (spec §2.1, docs/capabilities.md): a bridge older than the version the action
 * needs gets 412 with the exact body, at the version itself the action is accepted; on both platforms.
 */
describe('the modify_pending family on a bridge too old for it', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ worker: false });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  const signals = {
    modify_pending: { action: 'modify_pending', orderId: 'o-1', price: 1.1 },
    modify_pending_expiry: { action: 'modify_pending_expiry', orderId: 'o-1', expiry: '2099-01-01T00:00:00Z' },
  } as const;
  const cases = [
    ['mt5', 'EA', '1.9.0', `install the MT5 bridge ${CURRENT_BRIDGE_VERSION.mt5} (the download on the account's page of the dashboard)`],
    ['ctrader', 'cBot', '1.0.0', `run the cTrader connector ${CURRENT_BRIDGE_VERSION.ctrader}`],
  ] as const;

  test.each(cases.flatMap((c) => (Object.keys(signals) as (keyof typeof signals)[]).map((action) => [action, ...c] as const)))(
    'when %s goes to a %s account whose bridge is older than it needs, then 412 with the exact body; at that version, 202',
    async (action, platform, program, tooOld, howTo) => {
      const needed = CAPABILITIES[platform].needs[action]!;
      expect(needed).toBe(platform === 'mt5' ? '2.0.0' : '1.1.0');
      const f = await seedOwner(stack.registry, [
        { platform, bridgeVersion: tooOld },
        { platform, bridgeVersion: needed },
      ]);
      const url = (i: number) => `${stack.ingress.url}/webhook/custom/${f.accounts[i]!.id}`;
      const refused = await post(url(0), { secret: f.secret, ...signals[action] });
      expect({ status: refused.status, body: refused.body }).toEqual({
        status: 412,
        body: {
          error: `Not supported by this account's bridge: ${action} needs ${program} version ${needed} or later; this account's bridge is ${tooOld}; update the bridge and retry: ${howTo}`,
          correlationId: refused.headers.get('x-request-id'),
          installBridgeVersion: CURRENT_BRIDGE_VERSION[platform],
        },
      });
      const accepted = await post(url(1), { secret: f.secret, ...signals[action] });
      expect(accepted.status).toBe(202);
    },
  );
});
