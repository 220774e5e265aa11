/** The 17 actions of the spec (§2.1), grouped the way the action table groups them. */
export const ACTIONS = [
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

export type Action = (typeof ACTIONS)[number];

export const MARKET_ENTRIES: readonly Action[] = ['buy', 'sell'];
export const PENDING_ENTRIES: readonly Action[] = ['buy_limit', 'sell_limit', 'buy_stop', 'sell_stop'];
export const STOP_LIMIT_ENTRIES: readonly Action[] = ['buy_stop_limit', 'sell_stop_limit'];

/** Opening signals: the only ones the status poll reports (spec §1.6). */
export function isOpening(action: Action): boolean {
  return MARKET_ENTRIES.includes(action) || PENDING_ENTRIES.includes(action) || STOP_LIMIT_ENTRIES.includes(action);
}

export function isMarketEntry(action: Action): boolean {
  return MARKET_ENTRIES.includes(action);
}

/** The direction of an entry; undefined for actions that open nothing. */
export function entrySide(action: Action): 'buy' | 'sell' | undefined {
  if (!isOpening(action)) return undefined;
  return action.startsWith('buy') ? 'buy' : 'sell';
}

/**
 * Spec §5 rule 4: these four change or close positions chosen by the broker's current state, so a blind
 * resend could act twice on a different position set; the caller must name the action with a key.
 */
export function requiresIdempotencyKey(signal: { action: Action; positionId?: string }): boolean {
  if (signal.action === 'breakeven' || signal.action === 'modify_sl' || signal.action === 'modify_tp') return true;
  return signal.action === 'close' && signal.positionId === undefined;
}
