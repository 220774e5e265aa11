/**
 * The 17 actions as the spec lists them (§2.1), written out from the spec rather than read from src/domain/actions.ts,
 * so that a test comparing the two catches a drift.
 */
export const SPEC_ACTIONS = [
  'buy',
  'sell',
  'buy_limit',
  'sell_limit',
  'buy_stop',
  'sell_stop',
  'buy_stop_limit',
  'sell_stop_limit',
  'close',
  'close_all',
  'partial_close',
  'cancel_pending',
  'modify_sl',
  'modify_tp',
  'modify_pending',
  'modify_pending_expiry',
  'breakeven',
] as const;

/** The spec's entries (§1.6: the only actions the status poll reports). */
export const SPEC_OPENING = SPEC_ACTIONS.slice(0, 8);
/** Everything else: exits and changes. */
export const SPEC_NOT_OPENING = SPEC_ACTIONS.slice(8);
