import { z } from 'zod';
import { SYMBOL_PATTERN } from './symbol';

/** An account owner's risk rules, as stored in the registry and snapshotted into each signal at acceptance. */

const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'HH:MM');
const symbol = z.string().regex(SYMBOL_PATTERN);

const tradingWindowSchema = z.strictObject({
  /** 0 = Sunday … 6 = Saturday, UTC. */
  days: z.array(z.number().int().min(0).max(6)).min(1),
  from: hhmm,
  to: hhmm,
});

/**
 * How an entry's lots are decided: as the signal says, fixed, a multiple, or by risk (docs/risk-sizing.md): the lots
 * that lose `percent` of equity or balance, or `amount` of account currency, if the stop loss is hit. Sizing by risk
 * runs on the bridge, on its live account at execution; an entry without a stop loss is refused.
 */
const sizingSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('signal') }),
  z.strictObject({ mode: z.literal('fixed'), lots: z.number().gt(0).lte(100) }),
  z.strictObject({ mode: z.literal('multiplier'), factor: z.number().gt(0).lte(100) }),
  z.strictObject({ mode: z.literal('risk_percent'), of: z.enum(['equity', 'balance']), percent: z.number().gt(0).lte(10) }),
  z.strictObject({ mode: z.literal('risk_amount'), amount: z.number().gt(0).max(1e9) }),
]);

/**
 * Loss guards (docs/risk-sizing.md): entries are refused while the account is down more than the daily limit from the
 * trading day's opening equity (the day in `timezone`), or more than `maxDrawdownPercent` from the highest equity
 * seen. Exits always pass. The bridge applies them on its live account, one command at a time.
 */
const lossGuardsSchema = z
  .strictObject({
    dailyLossAmount: z.number().gt(0).max(1e9).optional(),
    dailyLossPercent: z.number().gt(0).lte(100).optional(),
    timezone: z
      .string()
      .max(64)
      .refine((tz) => {
        try {
          new Intl.DateTimeFormat('en-US', { timeZone: tz });
          return true;
        } catch {
          return false;
        }
      }, 'an IANA time zone, e.g. Europe/London')
      .default('UTC'),
    maxDrawdownPercent: z.number().gt(0).lte(100).optional(),
    /** The owner's reset of the drawdown guard: the bridge measures the drawdown from the equity it sees after this. */
    drawdownResetAt: z.iso.datetime({ offset: true }).optional(),
    /**
     * The copy-trading stop-out: when the drawdown guard trips, the bridge closes every position and cancels every
     * pending order, once per reset (docs/risk-sizing.md, "Stop-out"). Needs a bridge that announced `stop_out`.
     */
    stopOut: z.boolean().optional(),
  })
  .refine((g) => !(g.dailyLossAmount !== undefined && g.dailyLossPercent !== undefined), { message: 'give dailyLossAmount or dailyLossPercent, not both' })
  .refine((g) => !g.stopOut || g.maxDrawdownPercent !== undefined, {
    message: 'stopOut closes everything when the drawdown guard trips: set maxDrawdownPercent with it',
    path: ['stopOut'],
  });

const pips = z.number().gt(0).max(1e6);
const pipsOrZero = z.number().gte(0).max(1e6);

/**
 * The owner's defaults for trade management (docs/trade-management.md), applied to entries by the risk rules: a signal
 * that carries its own trail (or breakeven) fields uses those instead; the tighter max spread wins.
 */
const managementDefaultsSchema = z
  .strictObject({
    trailDistancePips: pips.optional(),
    trailTriggerPips: pipsOrZero.optional(),
    trailStepPips: pips.optional(),
    breakevenTriggerPips: pips.optional(),
    breakevenOffsetPips: pipsOrZero.optional(),
    maxSpreadPips: pips.optional(),
  })
  .refine((m) => m.trailDistancePips !== undefined || (m.trailTriggerPips === undefined && m.trailStepPips === undefined), {
    message: 'trailTriggerPips and trailStepPips need trailDistancePips',
    path: ['trailDistancePips'],
  })
  .refine((m) => m.breakevenTriggerPips !== undefined || m.breakevenOffsetPips === undefined, {
    message: 'breakevenOffsetPips needs breakevenTriggerPips',
    path: ['breakevenTriggerPips'],
  })
  .refine((m) => m.breakevenTriggerPips === undefined || (m.breakevenOffsetPips ?? 0) < m.breakevenTriggerPips, {
    message: 'breakevenOffsetPips must be less than breakevenTriggerPips',
    path: ['breakevenOffsetPips'],
  });
export type ManagementDefaults = z.infer<typeof managementDefaultsSchema>;

export const riskSettingsSchema = z.strictObject({
  allowedSymbols: z.array(symbol).optional(),
  blockedSymbols: z.array(symbol).default([]),
  maxVolume: z.number().gt(0).lte(100).optional(),
  sizing: sizingSchema.default({ mode: 'signal' }),
  requireStopLoss: z.boolean().default(false),
  maxOpenPositions: z.number().int().min(0).optional(),
  /** At most this many open positions in one symbol; enforced by a bridge that announced `position_limits`. */
  maxOpenPositionsPerSymbol: z.number().int().min(0).optional(),
  tradingHours: z.array(tradingWindowSchema).optional(),
  maxSignalAgeMs: z.number().int().min(1).max(86_400_000).optional(),
  closeOnly: z.boolean().default(false),
  lossGuards: lossGuardsSchema.optional(),
  /** Trade management applied to every entry unless the signal says otherwise (protocol 1.6). */
  management: managementDefaultsSchema.optional(),
});
export type RiskSettings = z.infer<typeof riskSettingsSchema>;

export const symbolMapSchema = z.strictObject({
  aliases: z.record(symbol, symbol).default({}),
  prefix: z.string().max(16).default(''),
  suffix: z.string().max(16).default(''),
});
export type SymbolMap = z.infer<typeof symbolMapSchema>;
