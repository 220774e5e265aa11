import { z } from 'zod';
import { SYMBOL_PATTERN } from './signal';

/** An account owner's risk rules, as stored in the registry and snapshotted into each signal at acceptance. */

const hhmm = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'HH:MM');
const symbol = z.string().regex(SYMBOL_PATTERN);

export const tradingWindowSchema = z.strictObject({
  /** 0 = Sunday … 6 = Saturday, UTC. */
  days: z.array(z.number().int().min(0).max(6)).min(1),
  from: hhmm,
  to: hhmm,
});

export const sizingSchema = z.discriminatedUnion('mode', [
  z.strictObject({ mode: z.literal('signal') }),
  z.strictObject({ mode: z.literal('fixed'), lots: z.number().gt(0).lte(100) }),
  z.strictObject({ mode: z.literal('multiplier'), factor: z.number().gt(0).lte(100) }),
]);

export const riskSettingsSchema = z.strictObject({
  allowedSymbols: z.array(symbol).optional(),
  blockedSymbols: z.array(symbol).default([]),
  maxVolume: z.number().gt(0).lte(100).optional(),
  sizing: sizingSchema.default({ mode: 'signal' }),
  requireStopLoss: z.boolean().default(false),
  maxOpenPositions: z.number().int().min(0).optional(),
  tradingHours: z.array(tradingWindowSchema).optional(),
  maxSignalAgeMs: z.number().int().min(1).max(86_400_000).optional(),
  closeOnly: z.boolean().default(false),
});
export type RiskSettings = z.infer<typeof riskSettingsSchema>;

export const symbolMapSchema = z.strictObject({
  aliases: z.record(symbol, symbol).default({}),
  prefix: z.string().max(16).default(''),
  suffix: z.string().max(16).default(''),
});
export type SymbolMap = z.infer<typeof symbolMapSchema>;
