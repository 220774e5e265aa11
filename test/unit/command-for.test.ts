import { commandFor } from '../../src/risk/command';
import { accountSchema } from '../../src/domain/account';
import type { AccountWorkflowInput } from '../../src/domain/workflow-input';

/**
 * The one function the ingress (dispatch at acceptance) and the account workflow (supervision) both apply: the same
 * input gives the same command whoever runs it and whenever, up to the expiry; past it, a refusal that still says what
 * the command was, so whoever finds it queued can ask the bridge about it.
 */

const ACCEPTED = Date.parse('2026-11-26T12:00:00.000Z');
const COMMAND_ID = 'signal/sig_1/account/acc-1';

function input(risk: Record<string, unknown> = {}, signal: AccountWorkflowInput['signal'] = { action: 'buy', symbol: 'EURUSD', volume: 0.2, sl: 1.09 }) {
  const a = accountSchema.parse({ id: 'acc-1', owner: 'alice', platform: 'mt5', bridgeVersion: '2.1.0', risk: { maxSignalAgeMs: 30_000, ...risk } });
  return {
    signalId: 'sig_1',
    correlationId: 'req_1',
    acceptedAt: new Date(ACCEPTED).toISOString(),
    signal: { ...signal, meta: { origin: 'tradingview' } },
    target: {
      account: { id: a.id, owner: a.owner, platform: a.platform, region: a.region, bridgeVersion: a.bridgeVersion, risk: a.risk, symbols: a.symbols },
      seq: 42,
      expiresAt: new Date(ACCEPTED + 30_000).toISOString(),
    },
  } satisfies AccountWorkflowInput;
}

describe('commandFor', () => {
  test('when the signal is fresh, then the command carries the commandId, its number, its expiry, the sized volume, and never meta', () => {
    const plan = commandFor(input(), COMMAND_ID, ACCEPTED + 5);
    expect(plan).toEqual({
      ok: true,
      command: {
        action: 'buy',
        symbol: 'EURUSD',
        volume: 0.2,
        sl: 1.09,
        commandId: COMMAND_ID,
        seq: 42,
        signalId: 'sig_1',
        accountId: 'acc-1',
        acceptedAt: new Date(ACCEPTED).toISOString(),
        expiresAt: new Date(ACCEPTED + 30_000).toISOString(),
      },
    });
  });

  test('when the ingress builds it at acceptance and the workflow seconds later, then both build the very same command', () => {
    const atIngress = commandFor(input(), COMMAND_ID, ACCEPTED + 3);
    const inWorkflow = commandFor(input(), COMMAND_ID, ACCEPTED + 29_999);
    expect(inWorkflow).toEqual(atIngress);
  });

  test('when it is run past the expiry, then signal_expired, with the command it would have been', () => {
    const plan = commandFor(input(), COMMAND_ID, ACCEPTED + 30_001);
    const fresh = commandFor(input(), COMMAND_ID, ACCEPTED);
    expect(plan).toEqual({ ok: false, reason: 'signal_expired', expired: fresh.ok ? fresh.command : undefined });
  });

  test('when the rules refuse it, then the refusal and no command, fresh or expired', () => {
    expect(commandFor(input({ closeOnly: true }), COMMAND_ID, ACCEPTED)).toEqual({ ok: false, reason: 'risk_close_only' });
    expect(commandFor(input({ closeOnly: true }), COMMAND_ID, ACCEPTED + 60_000)).toEqual({ ok: false, reason: 'signal_expired' });
    expect(commandFor(input({ maxVolume: 0.1 }), COMMAND_ID, ACCEPTED)).toEqual({ ok: false, reason: 'risk_max_volume_exceeded' });
  });

  test('when the account sizes by risk, then the signal volume does not travel', () => {
    const plan = commandFor(input({ sizing: { mode: 'risk_percent', percent: 1, of: 'balance' } }), COMMAND_ID, ACCEPTED);
    // Not supported by a bridge without the feature: the refusal names it.
    expect(plan).toEqual({ ok: false, reason: 'risk_sizing_unsupported' });
    const withFeature = input({ sizing: { mode: 'risk_percent', percent: 1, of: 'balance' } });
    const featured = {
      ...withFeature,
      target: { ...withFeature.target, account: { ...withFeature.target.account, bridgeFeatures: ['risk_sizing' as const] } },
    };
    const sized = commandFor(featured, COMMAND_ID, ACCEPTED);
    expect(sized.ok).toBe(true);
    const command = sized.ok ? sized.command : undefined;
    expect(command).not.toHaveProperty('volume');
    expect(command?.riskSizing).toEqual({ basis: 'balance_percent', value: 1 });
  });
});
