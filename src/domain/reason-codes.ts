/**
 * The service's own rejection reasons, the one list of them: the metrics' reason label and the table of
 * docs/reason-codes.md come from here (test/unit/doc-tables.test.ts fails when the doc drifts). Codes are stable:
 * they never change meaning; new ones may be added. Risk rules run in the order of this table.
 */
export const REASON_CODES = {
  signal_expired: {
    raisedBy: 'workflow or bridge',
    meaning: 'the signal was older than its max age (30 s for market entries by default) when it would have executed; nothing was placed',
  },
  bridge_offline: { raisedBy: 'workflow', meaning: 'no bridge took the command before it expired; it was withdrawn, nothing was placed' },
  dispatch_failed: {
    raisedBy: 'workflow',
    meaning: 'the command could not be queued for the bridge before it expired (queue store down); it was withdrawn, nothing was placed',
  },
  account_owner_changed: {
    raisedBy: 'workflow',
    meaning: 'the account went to another owner while the command waited for its bridge; it was withdrawn before any bridge took it, nothing was placed',
  },
  signal_overtaken: {
    raisedBy: 'workflow',
    meaning:
      "a later signal for the account was already handed to its bridge while this one's place in the order was no longer held " +
      '(the service process that accepted it stopped in the instant between starting it and confirming the start, or its store ' +
      'was unreachable for longer than the place is held); it was not ' +
      'placed, so that the account never runs your signals out of order',
  },
  risk_close_only: { raisedBy: 'risk rules', meaning: 'the account is in close-only mode: entries are refused, exits allowed' },
  risk_symbol_not_allowed: { raisedBy: 'risk rules', meaning: "the symbol is not on the account's allowed list" },
  risk_symbol_blocked: { raisedBy: 'risk rules', meaning: "the symbol is on the account's blocked list" },
  risk_outside_trading_hours: {
    raisedBy: 'risk rules',
    meaning: "the signal was accepted outside the account's trading hours (UTC windows by weekday)",
  },
  risk_stop_loss_required: {
    raisedBy: 'risk rules',
    meaning: 'the account requires a stop loss on entries, or sizes them by risk, and the signal has neither `sl` nor `slPips`',
  },
  risk_sizing_unsupported: {
    raisedBy: 'risk rules',
    meaning:
      'the account sizes entries by risk, has loss guards or a per-symbol position limit, and its bridge did not announce that it can apply them (an older bridge): update the bridge; exits still run',
  },
  management_unsupported: {
    raisedBy: 'risk rules',
    meaning:
      "the account's defaults ask for trade management (trailing stop, breakeven trigger or max spread) that its bridge did not announce (an older bridge): update the bridge; exits still run",
  },
  risk_max_volume_exceeded: { raisedBy: 'risk rules', meaning: "the sized volume is above the account's max volume per order" },
  risk_volume_below_minimum: { raisedBy: 'risk rules', meaning: 'the sized volume, rounded down to the volume step, is below the minimum lot' },
  risk_max_open_positions: {
    raisedBy: 'bridge',
    meaning: "the account already holds its maximum number of open positions, in all or in the entry's symbol",
  },
  risk_daily_loss_limit: {
    raisedBy: 'bridge',
    meaning:
      "the account's equity is down more than the owner's daily loss limit from the trading day's opening equity: entries are refused until the next trading day",
  },
  risk_max_drawdown: {
    raisedBy: 'bridge',
    meaning: "the account's equity is down more than the owner's maximum drawdown from the highest equity seen: entries are refused until the owner resets it",
  },
  risk_volume_unsizable: {
    raisedBy: 'bridge',
    meaning:
      'the entry is sized by risk and the bridge has no price, tick value or stop distance to size it with (market closed, unknown symbol): nothing was placed',
  },
  risk_figures_unavailable: {
    raisedBy: 'bridge',
    meaning:
      "the entry is sized by risk or guarded against losses and the bridge could not read the account's figures (balance, equity, the price or the conversion rate) fresh from the broker when it would have executed: it was not placed rather than sized or guarded on a guess",
  },
  risk_figures_stale: {
    raisedBy: 'bridge',
    meaning:
      "the entry is sized by risk or guarded against losses and a price behind the account's figures (the entry's symbol, the conversion symbol or an open position's symbol) was last quoted longer ago than the service's bound (60 s): it was not placed rather than sized or guarded on old prices; the message names the symbol and its age",
  },
  spread_too_wide: {
    raisedBy: 'bridge',
    meaning: "the spread at execution was wider than the entry's maxSpreadPips (or the account's max spread, the tighter wins): nothing was placed or closed",
  },
  take_profit_level_invalid: {
    raisedBy: 'bridge',
    meaning:
      "a take-profit level's price was not on the profitable side of the price at execution, or not nearer than the entry's final take profit: nothing was placed",
  },
  close_opposite_failed: {
    raisedBy: 'bridge',
    meaning: 'closeOpposite could not close every position of the symbol on the other side; the entry was not placed (the message names what was closed)',
  },
  bridge_unsupported_action: { raisedBy: 'bridge', meaning: 'the connected EA/cBot cannot perform this action' },
  bridge_invalid_command: { raisedBy: 'bridge', meaning: "the command failed the bridge's own validation" },
  bridge_wrong_account: { raisedBy: 'bridge', meaning: "the command named another account than the bridge's" },
  bridge_internal_error: { raisedBy: 'bridge', meaning: 'the bridge failed before reaching the broker' },
  bridge_outcome_unknown: {
    raisedBy: 'bridge',
    meaning:
      'the answer to this command was lost (connection or restart) and the bridge could not establish from the broker whether it ran ' +
      '(a partial close, or a command that expired meanwhile); it was not sent again: check the account',
  },
} as const satisfies Record<string, { raisedBy: 'workflow' | 'workflow or bridge' | 'risk rules' | 'bridge'; meaning: string }>;

export type ReasonCode = keyof typeof REASON_CODES;

/**
 * Not an outcome: the `Reason` search attribute of a signal workflow one of whose account workflows failed, so that
 * an operator finds it (`Reason = "account_workflow_failed"`) and records what happened (docs/operating.md, "An account workflow that failed").
 */
export const ACCOUNT_WORKFLOW_FAILED = 'account_workflow_failed';

export function isReasonCode(reason: string): reason is ReasonCode {
  return Object.hasOwn(REASON_CODES, reason);
}

/** What the account owner's risk rules can answer at execution: an expired signal, or a rule raised by them. */
export type RiskReason = 'signal_expired' | { [K in ReasonCode]: (typeof REASON_CODES)[K]['raisedBy'] extends 'risk rules' ? K : never }[ReasonCode];

/** MT5 trade-server return codes a bridge passes on as `broker:<retcode>` (MQL5 reference, trade server return codes). */
const MT5_RETCODES: Record<string, string> = {
  '10004': 'requote: the price changed',
  '10006': 'the broker rejected the request',
  '10013': 'invalid request',
  '10014': 'invalid volume',
  '10015': 'invalid price',
  '10016': 'invalid stops (stop loss or take profit too close or on the wrong side)',
  '10017': 'trading is disabled for the symbol',
  '10018': 'the market is closed',
  '10019': 'not enough money',
  '10021': 'no quotes to process the request',
  '10022': 'invalid expiry of the pending order',
  '10024': 'too frequent requests',
  '10026': 'autotrading is disabled by the server',
  '10027': 'Algo Trading is off in the MT5 terminal',
  '10030': 'the symbol does not take this order filling type',
  '10031': 'no connection with the trade server',
  '10036': 'the position does not exist (already closed)',
  '4754': 'the order does not exist',
};

/**
 * A rejection reason in words, for the owner's pages (the code stays beside it): the meaning of our own codes
 * (REASON_CODES), the broker's own text of a `broker:<code> <text>` reason, and for a broker code alone the meaning of
 * the MT5 return code when it is a known one.
 */
export function reasonText(reason: string): string {
  const code = reason.split(' ', 1)[0]!;
  if (isReasonCode(code)) return REASON_CODES[code].meaning;
  const broker = /^broker:(\S+)(?:\s+(.+))?$/.exec(reason);
  if (broker) return `the broker refused it: ${broker[2] ?? MT5_RETCODES[broker[1]!] ?? `code ${broker[1]}`}`;
  return reason;
}
