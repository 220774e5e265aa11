import { BRIDGE_FEATURES } from '../../src/domain/account';
import { bridgeUpdateReason, CURRENT_BRIDGE_VERSION } from '../../src/domain/capabilities';

/** When an account's page tells the owner to update the bridge: only when it lacks something the service offers. */
describe('bridgeUpdateReason', () => {
  const all = [...BRIDGE_FEATURES];
  test.each([
    ['the paper bridge of the demo (2.1.0, every feature)', 'mt5', '2.1.0', all, undefined],
    ['the current MT5 bridge', 'mt5', CURRENT_BRIDGE_VERSION.mt5, [], undefined],
    ['no bridge yet', 'mt5', '0.0.0', [], undefined],
    [
      'an MT5 bridge too old for stop-limit orders',
      'mt5',
      '1.9.0',
      all,
      'it cannot run the actions buy_stop_limit, sell_stop_limit, modify_pending, modify_pending_expiry',
    ],
    [
      'an MT5 bridge without trade management',
      'mt5',
      '3.4.0',
      ['risk_sizing', 'loss_guards', 'position_limits', 'stop_out', 'trade_events'],
      'it cannot run the features trailing_stop, breakeven_trigger, take_profit_levels, close_opposite, max_spread',
    ],
    [
      'a cTrader connector too old and without features',
      'ctrader',
      '1.0.0',
      [],
      `it cannot run the actions buy_stop_limit, sell_stop_limit, modify_pending, modify_pending_expiry and the features ${BRIDGE_FEATURES.join(', ')}`,
    ],
  ] as const)('%s', (_name, platform, bridgeVersion, bridgeFeatures, expected) => {
    expect(bridgeUpdateReason({ platform, bridgeVersion, bridgeFeatures: [...bridgeFeatures] })).toBe(expected);
  });
});
