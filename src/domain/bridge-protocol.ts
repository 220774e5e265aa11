import { z } from 'zod';
import { ACTIONS } from './actions';
import { brokerTicket } from './ticket';

/**
 * The bridge API's messages (docs/bridge-protocol.md). An EA or cBot connects out to us, says hello, long-polls its
 * commands and reports outcomes by commandId. These schemas are shared by the ingress and the paper bridge.
 */

export const BRIDGE_PROTOCOL_VERSION = 1;

/** A symbol as the broker trades it: what sizing needs to round to the broker's volume rules. */
export const instrumentSchema = z.strictObject({
  name: z.string().min(1).max(64),
  digits: z.number().int().min(0).max(10),
  pipSize: z.number().gt(0),
  volumeStep: z.number().gt(0).lte(100),
  volumeMin: z.number().gt(0).lte(100),
  volumeMax: z.number().gt(0),
});
export type Instrument = z.infer<typeof instrumentSchema>;

export const helloSchema = z.strictObject({
  platform: z.enum(['mt5', 'ctrader']),
  bridgeVersion: z.string().regex(/^\d+\.\d+\.\d+$/),
  capabilities: z.array(z.string().max(64)).max(64).default([]),
  /** The account's tradable symbols; the service sizes volumes with their step and minimum. */
  symbols: z.array(instrumentSchema).max(5000).optional(),
  account: z
    .looseObject({
      balance: z.number().optional(),
      equity: z.number().optional(),
      currency: z.string().max(8).optional(),
    })
    .optional(),
});
export type BridgeHello = z.infer<typeof helloSchema>;

/** One order instruction for one account, already sized, mapped and checked against the owner's risk rules. */
export const commandSchema = z.object({
  /** Stable across redeliveries: the account workflow id. The bridge executes a commandId at most once. */
  commandId: z.string(),
  /** Acceptance order within the account. */
  seq: z.number().int(),
  signalId: z.string(),
  accountId: z.string(),
  action: z.enum(ACTIONS),
  /** The broker's symbol, after the account's symbol mapping. */
  symbol: z.string().optional(),
  volume: z.number().optional(),
  price: z.number().optional(),
  stopLimitPrice: z.number().optional(),
  sl: z.number().optional(),
  tp: z.number().optional(),
  slPips: z.number().optional(),
  tpPips: z.number().optional(),
  positionId: z.string().optional(),
  orderId: z.string().optional(),
  partialVolume: z.number().optional(),
  expiry: z.string().optional(),
  side: z.enum(['buy', 'sell']).optional(),
  pnl: z.enum(['profit', 'loss']).optional(),
  /** The owner's max open positions: only the bridge knows the account's positions, so it enforces this one. */
  maxOpenPositions: z.number().int().min(0).optional(),
  /** The owner's max open positions in the entry's symbol (protocol 1.2, feature `position_limits`). */
  maxOpenPositionsPerSymbol: z.number().int().min(0).optional(),
  /**
   * Size this entry by risk on the live account (protocol 1.1; docs/risk-sizing.md): `volume` is then absent, and the
   * bridge reports the lots it placed and the figures it used.
   */
  riskSizing: z
    .strictObject({
      basis: z.enum(['equity_percent', 'balance_percent', 'fixed_amount']),
      value: z.number().gt(0),
      maxLots: z.number().gt(0).optional(),
    })
    .optional(),
  /** Loss guards for this entry, checked on the live account before it is placed (protocol 1.1). */
  lossGuards: z
    .strictObject({
      dailyLossAmount: z.number().gt(0).optional(),
      dailyLossPercent: z.number().gt(0).optional(),
      timezone: z.string(),
      maxDrawdownPercent: z.number().gt(0).optional(),
      /** The owner reset the drawdown guard at this instant: the peak starts again from the equity seen after it. */
      drawdownResetAt: z.string().optional(),
      /** The owner's stop-out is on (protocol 1.4): informational, the bridge arms on the answers' `stopOut`. */
      stopOut: z.boolean().optional(),
    })
    .optional(),
  /**
   * The oldest a quote behind this entry's figures may be, in ms (protocol 1.3; docs/risk-sizing.md): sent with
   * `riskSizing` or `lossGuards`. A bridge refuses the entry `risk_figures_stale` when the entry's symbol, its
   * conversion symbol or an open position's symbol was last quoted longer ago; an older bridge ignores it.
   */
  figuresMaxAgeMs: z.number().int().gt(0).optional(),
  /**
   * Trade management (protocol 1.6, docs/trade-management.md), entries only, defaults resolved by the service: the
   * bridge trails the stop, moves it to breakeven, takes profit in levels, closes the opposite side first, or refuses
   * a wide spread. Sent only to a bridge that announced the feature.
   */
  trailDistancePips: z.number().gt(0).optional(),
  trailTriggerPips: z.number().gte(0).optional(),
  trailStepPips: z.number().gt(0).optional(),
  breakevenTriggerPips: z.number().gt(0).optional(),
  breakevenOffsetPips: z.number().gte(0).optional(),
  takeProfits: z
    .array(z.strictObject({ tpPips: z.number().gt(0).optional(), tp: z.number().gt(0).optional(), closePercent: z.number().gt(0).lte(100) }))
    .min(1)
    .max(5)
    .optional(),
  closeOpposite: z.literal(true).optional(),
  maxSpreadPips: z.number().gt(0).optional(),
  acceptedAt: z.string(),
  /** Never execute past this instant; report `expired` instead. */
  expiresAt: z.string(),
});
export type BridgeCommand = z.infer<typeof commandSchema>;

const reportSchema = z.strictObject({
  commandId: z.string().min(1).max(256),
  /** filled: an entry was placed (ticket is the position or order); done: a non-opening action ran. */
  status: z.enum(['filled', 'rejected', 'expired', 'done']),
  ticket: brokerTicket(z.string().max(64)).nullish(),
  price: z.number().nullish(),
  volume: z.number().nullish(),
  retcode: z.union([z.number().int(), z.string().max(64)]).nullish(),
  message: z.string().max(512).nullish(),
  executedAt: z.iso.datetime({ offset: true }).max(64).nullish(),
});
export type BridgeReport = z.infer<typeof reportSchema>;

/**
 * The account's money as the bridge sees it now (protocol 1.2): sent with reports, and alone as a heartbeat when no
 * report went for a while. The service keeps the latest for the owner and operators (src/bridge/figures.ts); no risk
 * check trusts them, since those run on the bridge's live account at execution (docs/risk-sizing.md).
 */
export const accountFiguresSchema = z.strictObject({
  balance: z.number(),
  equity: z.number(),
  margin: z.number().optional(),
  freeMargin: z.number().optional(),
  currency: z.string().min(1).max(8),
});
export type AccountFigures = z.infer<typeof accountFiguresSchema>;

/**
 * What arms a bridge's stop-out (protocol 1.4; docs/risk-sizing.md, "Stop-out"): on the answers of hello and of every
 * commands poll while the account's owner has `lossGuards.stopOut`; an answer without it disarms the bridge.
 */
export const stopOutDirectiveSchema = z.strictObject({
  maxDrawdownPercent: z.number().gt(0).lte(100),
  /** The owner's last reset of the drawdown guard; a newer one re-arms a bridge that stopped the account out. */
  drawdownResetAt: z.string().max(64).nullable(),
  /** The watch trips only on figures whose quotes are at most this old. */
  figuresMaxAgeMs: z.number().int().gt(0),
});
export type StopOutDirective = z.infer<typeof stopOutDirectiveSchema>;

const ticketResultOf = (ok: 'closed' | 'cancelled') =>
  z.strictObject({ ticket: z.string().min(1).max(64), result: z.enum([ok, 'failed']), message: z.string().max(512).optional() });

/** A stop-out the bridge carried out (protocol 1.4): sent until the service acknowledges its eventId. */
const stopOutEventSchema = z.strictObject({
  type: z.literal('stop_out'),
  /** `stop-out/<drawdownResetAt or 'initial'>`: one per account and reset. */
  eventId: z.string().regex(/^stop-out\/[A-Za-z0-9:.+-]{1,64}$/),
  trippedAt: z.iso.datetime({ offset: true }),
  equity: z.number(),
  peak: z.number(),
  drawdownPercent: z.number(),
  maxDrawdownPercent: z.number(),
  currency: z.string().min(1).max(8),
  closed: z.array(ticketResultOf('closed')).max(500),
  cancelled: z.array(ticketResultOf('cancelled')).max(500),
});
export type StopOutEvent = z.infer<typeof stopOutEventSchema>;

/** Reports, with the account's figures and events; no report and only figures is a heartbeat. */
export const reportsBodySchema = z
  .strictObject({
    reports: z.array(reportSchema).max(100),
    account: accountFiguresSchema.optional(),
    events: z.array(stopOutEventSchema).max(10).optional(),
  })
  .refine((b) => b.reports.length > 0 || b.account !== undefined || (b.events?.length ?? 0) > 0, {
    message: 'send at least one report, an event, or the account figures (a heartbeat)',
  });
