/**
 * The 17 actions of the spec (§2.1), described once: what kind of order each is, the fields it takes, the bridge
 * version each platform needs for it, the venue feature it needs, and whether a resend must carry an idempotency key.
 * The signal schema (signal.ts), the OpenAPI document, capabilities, the MCP tool's description and the docs' action
 * tables are all derived from this table (test/unit/doc-tables.test.ts fails when a doc drifts from it).
 */

/** The order fields of a signal (the request fields secret, action, meta and idempotencyKey go with every action). */
export type OrderField =
  | 'symbol'
  | 'volume'
  | 'price'
  | 'stopLimitPrice'
  | 'sl'
  | 'tp'
  | 'slPips'
  | 'tpPips'
  | 'positionId'
  | 'orderId'
  | 'partialVolume'
  | 'expiry'
  | 'side'
  | 'pnl'
  | ManagementField;

/** Trade management on the entries (docs/trade-management.md); management.ts has their rules. */
type ManagementField =
  | 'trailDistancePips'
  | 'trailTriggerPips'
  | 'trailStepPips'
  | 'breakevenTriggerPips'
  | 'breakevenOffsetPips'
  | 'takeProfits'
  | 'closeOpposite'
  | 'maxSpreadPips';

export interface ActionRule {
  required: OrderField[];
  optional: OrderField[];
  /** At least one of these must be present. */
  oneOf?: OrderField[];
}

type ActionKind = 'market' | 'pending' | 'stop_limit' | 'exit';

export interface ActionDescription {
  kind: ActionKind;
  fields: ActionRule;
  /** The bridge version that can run it, per platform, when more than the platform's base version. */
  needs?: { mt5: string; ctrader: string };
  /** The venue feature it needs (an account's `venue` flags). */
  venue?: 'stopLimit' | 'modifyPending';
  /** Spec §5 rule 4: acts on positions chosen by the broker's current state, so a resend must be named by a key. */
  keyRequired: 'always' | 'without positionId' | 'never';
  /** One line for a trader. */
  summary: string;
  /** How its fields go together, where the required/optional lists do not say it. */
  fieldsNote?: string;
}

const ENTRY_STOPS: OrderField[] = ['sl', 'tp', 'slPips', 'tpPips'];
const MANAGEMENT: OrderField[] = [
  'trailDistancePips',
  'trailTriggerPips',
  'trailStepPips',
  'breakevenTriggerPips',
  'breakevenOffsetPips',
  'takeProfits',
  'maxSpreadPips',
];
// Reverse is a market entry's: a pending entry that closed the other side when it triggers would surprise the trader.
const MARKET: ActionRule = { required: ['symbol', 'volume'], optional: [...ENTRY_STOPS, ...MANAGEMENT, 'closeOpposite'] };
const PENDING: ActionRule = { required: ['symbol', 'volume', 'price'], optional: [...ENTRY_STOPS, ...MANAGEMENT] };
const STOP_LIMIT: ActionRule = { required: ['symbol', 'volume', 'price', 'stopLimitPrice'], optional: [...ENTRY_STOPS, ...MANAGEMENT] };
const STOP_LIMIT_NEEDS = { mt5: '2.0.0', ctrader: '1.1.0' };
const MODIFY_PENDING_NEEDS = { mt5: '2.0.0', ctrader: '1.1.0' };

/** The action table of spec §2.1. A field an action does not use is refused, so a mistaken template is caught. */
export const ACTION_TABLE = {
  buy: { kind: 'market', fields: MARKET, keyRequired: 'never', summary: 'buy at market' },
  sell: { kind: 'market', fields: MARKET, keyRequired: 'never', summary: 'sell at market' },
  buy_limit: { kind: 'pending', fields: PENDING, keyRequired: 'never', summary: 'buy when the price falls to `price`' },
  sell_limit: { kind: 'pending', fields: PENDING, keyRequired: 'never', summary: 'sell when the price rises to `price`' },
  buy_stop: { kind: 'pending', fields: PENDING, keyRequired: 'never', summary: 'buy when the price rises to `price`' },
  sell_stop: { kind: 'pending', fields: PENDING, keyRequired: 'never', summary: 'sell when the price falls to `price`' },
  buy_stop_limit: {
    kind: 'stop_limit',
    fields: STOP_LIMIT,
    needs: STOP_LIMIT_NEEDS,
    venue: 'stopLimit',
    keyRequired: 'never',
    summary: 'at the `stopLimitPrice` trigger, place a buy limit at `price`',
  },
  sell_stop_limit: {
    kind: 'stop_limit',
    fields: STOP_LIMIT,
    needs: STOP_LIMIT_NEEDS,
    venue: 'stopLimit',
    keyRequired: 'never',
    summary: 'at the `stopLimitPrice` trigger, place a sell limit at `price`',
  },
  // close: by positionId, or a filtered close by symbol/side/pnl (one or the other: checked in signal.ts).
  close: {
    kind: 'exit',
    fields: { required: [], optional: ['positionId', 'symbol', 'side', 'pnl'] },
    keyRequired: 'without positionId',
    summary: 'close one position, or every position matching a filter',
    fieldsNote: 'positionId, or a filter of one or more of symbol, side, pnl (not both)',
  },
  close_all: { kind: 'exit', fields: { required: [], optional: [] }, keyRequired: 'never', summary: 'close every position and cancel every pending order' },
  partial_close: {
    kind: 'exit',
    fields: { required: ['positionId', 'partialVolume'], optional: [] },
    keyRequired: 'never',
    summary: 'close part of a position',
  },
  cancel_pending: { kind: 'exit', fields: { required: ['orderId'], optional: [] }, keyRequired: 'never', summary: 'cancel a pending order' },
  modify_sl: { kind: 'exit', fields: { required: ['positionId', 'sl'], optional: [] }, keyRequired: 'always', summary: "move a position's stop loss" },
  modify_tp: { kind: 'exit', fields: { required: ['positionId', 'tp'], optional: [] }, keyRequired: 'always', summary: "move a position's take profit" },
  modify_pending: {
    kind: 'exit',
    fields: { required: ['orderId'], optional: ['price', 'stopLimitPrice', 'sl', 'tp', 'expiry'], oneOf: ['price', 'stopLimitPrice', 'sl', 'tp', 'expiry'] },
    needs: MODIFY_PENDING_NEEDS,
    venue: 'modifyPending',
    keyRequired: 'never',
    summary: 'change a pending order',
  },
  modify_pending_expiry: {
    kind: 'exit',
    fields: { required: ['orderId', 'expiry'], optional: [] },
    needs: MODIFY_PENDING_NEEDS,
    venue: 'modifyPending',
    keyRequired: 'never',
    summary: "change a pending order's expiry",
  },
  breakeven: {
    kind: 'exit',
    fields: { required: ['positionId'], optional: [] },
    keyRequired: 'always',
    summary: "move a position's stop loss to its entry price",
  },
} as const satisfies Record<string, ActionDescription>;

export type Action = keyof typeof ACTION_TABLE;

export const ACTIONS = Object.keys(ACTION_TABLE) as [Action, ...Action[]];

const describe = (action: Action): ActionDescription => ACTION_TABLE[action];

/** The fields each action takes (the schema's per-action conditions, and the OpenAPI document's). */
export const ACTION_RULES = Object.fromEntries(ACTIONS.map((a) => [a, describe(a).fields])) as Record<Action, ActionRule>;

/** Opening signals: the only ones the status poll reports (spec §1.6). */
export function isOpening(action: Action): boolean {
  return describe(action).kind !== 'exit';
}

export function isMarketEntry(action: Action): boolean {
  return describe(action).kind === 'market';
}

/** The direction of an entry; undefined for actions that open nothing. */
export function entrySide(action: Action): 'buy' | 'sell' | undefined {
  if (!isOpening(action)) return undefined;
  return action.startsWith('buy') ? 'buy' : 'sell';
}

/**
 * Spec §5 rule 4: these change or close positions chosen by the broker's current state, so a blind resend could act
 * twice on a different position set; the caller must name the action with a key.
 */
export function requiresIdempotencyKey(signal: { action: Action; positionId?: string }): boolean {
  const rule = describe(signal.action).keyRequired;
  return rule === 'always' || (rule === 'without positionId' && signal.positionId === undefined);
}

/** "buy/sell: symbol, volume; optional sl, tp, slPips, tpPips" for every group of actions that take the same fields. */
export function describeActionFields(): string {
  const groups = new Map<string, Action[]>();
  for (const a of ACTIONS) {
    const { fields, fieldsNote } = describe(a);
    const key = JSON.stringify({ ...fields, fieldsNote });
    groups.set(key, [...(groups.get(key) ?? []), a]);
  }
  return [...groups.entries()]
    .map(([key, actions]) => {
      const f = JSON.parse(key) as ActionRule & { fieldsNote?: string };
      if (f.fieldsNote) return `${actions.join('/')}: ${f.fieldsNote}`;
      const parts = [
        f.required.length > 0 ? f.required.join(', ') : 'no field',
        ...(f.oneOf ? [`at least one of ${f.oneOf.join(', ')}`] : f.optional.length > 0 ? [`optional ${f.optional.join(', ')}`] : []),
      ];
      return `${actions.join('/')}: ${parts.join('; ')}`;
    })
    .join('. ');
}
