/**
 * Trade management (protocol 1.6; docs/trade-management.md): what a bridge does with an open position after the
 * entry, as pure steps. The bridge feeds it quotes and carries out what it returns (one broker call at a time); the
 * broker always holds the real stop, so a bridge that is down leaves the position protected by the last stop set.
 * The MT5 bridge runs a port of this file; test/fixtures/trade-management-vectors.json holds the cases both run.
 */

export type Side = 'buy' | 'sell';
export type StopCause = 'trailing_stop' | 'breakeven_trigger';

/** The command's management fields (bridge protocol 1.6), defaults resolved by the service. */
export interface ManagementAsked {
  trailDistancePips?: number;
  trailTriggerPips?: number;
  trailStepPips?: number;
  breakevenTriggerPips?: number;
  breakevenOffsetPips?: number;
  takeProfits?: { tpPips?: number; tp?: number; closePercent: number }[];
}

/** The symbol as the bridge's broker trades it. */
export interface SymbolRules {
  pip: number;
  digits: number;
  volumeStep: number;
  volumeMin: number;
}

export interface Fill {
  ticket: string;
  symbol: string;
  side: Side;
  openPrice: number;
  volume: number;
  sl: number | null;
  tp: number | null;
}

interface Level {
  price: number;
  closePercent: number;
  /** Lots this level closes, decided at the fill. */
  volume: number;
  hit: boolean;
}

export type Intent =
  | { kind: 'modify'; sl: number; tp: number | null; cause: StopCause; trailActiveAt?: number }
  | { kind: 'partial_close'; level: number; volume: number; volumeBefore: number; closesPosition: boolean };

export interface ManagedPosition extends Fill, SymbolRules {
  initialVolume: number;
  trail?: { distancePips: number; triggerPips: number; stepPips: number; activeAt: number | null; best: number | null };
  breakeven?: { triggerPips: number; offsetPips: number; done: boolean };
  levels: Level[];
  stopMoves: number;
  /** The broker call in flight, written down before it is made (so a restart can tell whether it happened). */
  pending: Intent | null;
  /** When the broker last refused a management call: the next try waits a second, no retry storm. */
  failedAtMs: number | null;
}

export interface Quote {
  bid: number;
  ask: number;
}

const EPSILON = 1e-9;
const RETRY_AFTER_FAILURE_MS = 1000;

const roundTo = (v: number, digits: number) => Number(v.toFixed(digits));
const decimalsOf = (step: number) => {
  const [mantissa = '', exponent] = step.toExponential().split('e');
  return Math.max(0, (mantissa.split('.')[1]?.length ?? 0) - Number(exponent));
};
const lots = (v: number, step: number) => roundTo(v, decimalsOf(step));

/** The position to manage after a fill, or undefined when the command asked for no management. */
export function startManaging(asked: ManagementAsked, fill: Fill, rules: SymbolRules): ManagedPosition | undefined {
  const trailing = asked.trailDistancePips !== undefined;
  const breakeven = asked.breakevenTriggerPips !== undefined;
  const levels = levelsOf(asked.takeProfits ?? [], fill, rules);
  if (!trailing && !breakeven && levels.length === 0) return undefined;
  return {
    ...fill,
    ...rules,
    initialVolume: fill.volume,
    ...(trailing
      ? {
          trail: {
            distancePips: asked.trailDistancePips!,
            triggerPips: asked.trailTriggerPips ?? 0,
            stepPips: asked.trailStepPips ?? 1,
            activeAt: null,
            best: null,
          },
        }
      : {}),
    ...(breakeven ? { breakeven: { triggerPips: asked.breakevenTriggerPips!, offsetPips: asked.breakevenOffsetPips ?? 0, done: false } } : {}),
    levels,
    stopMoves: 0,
    pending: null,
    failedAtMs: null,
  };
}

/**
 * Levels nearest first. A level's lots are its share of the entry rounded down to the volume step (never more than
 * asked), raised to the minimum lot; when the shares add up to 100 % the last level takes whatever remains.
 */
function levelsOf(asked: NonNullable<ManagementAsked['takeProfits']>, fill: Fill, rules: SymbolRules): Level[] {
  const sign = fill.side === 'buy' ? 1 : -1;
  const priced = asked.map((l) => ({
    price: l.tp ?? roundTo(fill.openPrice + sign * (l.tpPips ?? 0) * rules.pip, rules.digits),
    closePercent: l.closePercent,
  }));
  priced.sort((a, b) => Math.abs(a.price - fill.openPrice) - Math.abs(b.price - fill.openPrice));
  const whole = Math.abs(priced.reduce((s, l) => s + l.closePercent, 0) - 100) < EPSILON;
  return priced.map((l, i) => {
    const share = Math.floor((fill.volume * l.closePercent) / 100 / rules.volumeStep + EPSILON) * rules.volumeStep;
    const volume = whole && i === priced.length - 1 ? fill.volume : Math.max(lots(share, rules.volumeStep), rules.volumeMin);
    return { ...l, volume: lots(volume, rules.volumeStep), hit: false };
  });
}

/** Pips in profit at the closing price (bid for a buy, ask for a sell). */
function closingPrice(p: ManagedPosition, q: Quote): number {
  return p.side === 'buy' ? q.bid : q.ask;
}

const better = (p: ManagedPosition, a: number, than: number | null) => than === null || (p.side === 'buy' ? a > than + EPSILON : a < than - EPSILON);

/**
 * One quote: the position's new state and at most one broker call to make. Nothing is asked while a call is in flight
 * or within a second of a refused one. The stop only ever moves in the trade's favour.
 */
export function onQuote(position: ManagedPosition, quote: Quote, nowMs: number): { position: ManagedPosition; intent: Intent | null } {
  if (position.pending) return { position, intent: null };
  const p: ManagedPosition = { ...position, trail: position.trail && { ...position.trail }, breakeven: position.breakeven && { ...position.breakeven } };
  const c = closingPrice(p, quote);
  const sign = p.side === 'buy' ? 1 : -1;
  const profitPips = (sign * (c - p.openPrice)) / p.pip;
  if (p.trail) {
    if (p.trail.activeAt === null && profitPips >= p.trail.triggerPips - EPSILON) p.trail = { ...p.trail, activeAt: c, best: c };
    else if (p.trail.activeAt !== null) p.trail.best = p.trail.best === null || better(p, c, p.trail.best) ? c : p.trail.best;
  }
  if (p.failedAtMs !== null && nowMs - p.failedAtMs < RETRY_AFTER_FAILURE_MS) return { position: p, intent: null };

  const level = p.levels.findIndex((l) => !l.hit);
  if (level >= 0 && sign * (c - p.levels[level]!.price) >= -EPSILON) {
    const asked = p.levels[level]!;
    const whole = level === p.levels.length - 1 && asked.volume >= p.volume - EPSILON;
    let volume = Math.min(asked.volume, p.volume);
    if (whole || p.volume - volume < p.volumeMin - EPSILON) volume = p.volume;
    const intent: Intent = {
      kind: 'partial_close',
      level,
      volume: lots(volume, p.volumeStep),
      volumeBefore: p.volume,
      closesPosition: volume >= p.volume - EPSILON,
    };
    return { position: { ...p, pending: intent }, intent };
  }

  // A stop must stay on the losing side of the price, or the broker refuses it (the stop would already be hit).
  const placeable = (sl: number) => (p.side === 'buy' ? sl < quote.bid - EPSILON : sl > quote.ask + EPSILON);
  let breakevenSl: number | undefined;
  if (p.breakeven && !p.breakeven.done && profitPips >= p.breakeven.triggerPips - EPSILON) {
    breakevenSl = roundTo(p.openPrice + sign * p.breakeven.offsetPips * p.pip, p.digits);
    if (!better(p, breakevenSl, p.sl)) {
      p.breakeven.done = true;
      breakevenSl = undefined;
    } else if (!placeable(breakevenSl)) breakevenSl = undefined;
  }
  let trailSl: number | undefined;
  if (p.trail?.activeAt != null && p.trail.best !== null) {
    const candidate = roundTo(p.trail.best - sign * p.trail.distancePips * p.pip, p.digits);
    const stepped = p.sl === null || sign * (candidate - p.sl) >= p.trail.stepPips * p.pip - EPSILON;
    if (stepped && better(p, candidate, p.sl) && placeable(candidate)) trailSl = candidate;
  }
  if (breakevenSl === undefined && trailSl === undefined) return { position: p, intent: null };
  const byBreakeven = trailSl === undefined || (breakevenSl !== undefined && !better(p, trailSl, breakevenSl));
  const intent: Intent = byBreakeven
    ? { kind: 'modify', sl: breakevenSl!, tp: p.tp, cause: 'breakeven_trigger' }
    : { kind: 'modify', sl: trailSl!, tp: p.tp, cause: 'trailing_stop', trailActiveAt: p.trail!.activeAt! };
  return { position: { ...p, pending: intent }, intent };
}

/** The broker's answer to the call in flight. */
export function settle(position: ManagedPosition, result: 'done' | 'failed', nowMs: number): ManagedPosition | null {
  const intent = position.pending;
  if (!intent) return position;
  if (result === 'failed') return { ...position, pending: null, failedAtMs: nowMs };
  const p: ManagedPosition = { ...position, pending: null, failedAtMs: null };
  if (intent.kind === 'modify') {
    p.sl = intent.sl;
    p.stopMoves += 1;
    if (intent.cause === 'breakeven_trigger' && p.breakeven) p.breakeven = { ...p.breakeven, done: true };
    return p;
  }
  if (intent.closesPosition) return null;
  p.volume = lots(intent.volumeBefore - intent.volume, p.volumeStep);
  p.levels = p.levels.map((l, i) => (i === intent.level ? { ...l, hit: true } : l));
  return p;
}

/** The position as the broker holds it now (after a restart or a gap), or null when it is gone. */
export interface BrokerPosition {
  sl: number | null;
  tp: number | null;
  volume: number;
}

/**
 * After a restart: the state read back from the bridge's file, squared with the broker. A call that was in flight
 * counts as done only if the broker shows it (the stop it set, the lots it closed); otherwise it is dropped and the
 * next quote decides anew. Never sends a call again by itself, so a restart never moves a stop twice for one step.
 */
export function resume(saved: ManagedPosition, broker: BrokerPosition | null): ManagedPosition | null {
  if (broker === null) return null;
  let p: ManagedPosition = saved;
  const intent = saved.pending;
  const halfPoint = 0.5 * 10 ** -saved.digits;
  if (intent?.kind === 'modify' && broker.sl !== null && Math.abs(broker.sl - intent.sl) <= halfPoint) p = settle(p, 'done', 0)!;
  else if (intent?.kind === 'partial_close' && broker.volume <= intent.volumeBefore - intent.volume + EPSILON) {
    p = settle({ ...p, pending: { ...intent, closesPosition: false } }, 'done', 0)!;
  } else p = { ...p, pending: null };
  p = { ...p, sl: broker.sl, tp: broker.tp, volume: broker.volume, failedAtMs: null };
  // The trail's best price since it started is at least what the stop it set implies.
  if (p.trail?.activeAt != null && p.sl !== null) {
    const implied = roundTo(p.sl + (p.side === 'buy' ? 1 : -1) * p.trail.distancePips * p.pip, p.digits);
    if (p.trail.best === null || better(p, implied, p.trail.best)) p.trail = { ...p.trail, best: implied };
  }
  return p;
}

/** Why an entry must not be placed at this quote (checked before anything is closed or placed), or undefined. */
export function entryRefusal(
  asked: ManagementAsked & { maxSpreadPips?: number; tp?: number },
  side: Side,
  quote: Quote,
  pip: number,
): { reason: 'spread_too_wide' | 'take_profit_level_invalid'; message: string } | undefined {
  const spreadPips = (quote.ask - quote.bid) / pip;
  if (asked.maxSpreadPips !== undefined && spreadPips > asked.maxSpreadPips + EPSILON) {
    return { reason: 'spread_too_wide', message: `spread ${roundTo(spreadPips, 1)} pips > max ${asked.maxSpreadPips}` };
  }
  const sign = side === 'buy' ? 1 : -1;
  const reference = side === 'buy' ? quote.ask : quote.bid;
  for (const level of asked.takeProfits ?? []) {
    if (level.tp === undefined) continue;
    if (sign * (level.tp - reference) <= EPSILON) {
      const where = side === 'buy' ? 'above the ask' : 'below the bid';
      return { reason: 'take_profit_level_invalid', message: `take-profit level ${level.tp} is not ${where} ${reference}` };
    }
    if (asked.tp !== undefined && sign * (level.tp - asked.tp) >= -EPSILON) {
      return { reason: 'take_profit_level_invalid', message: `take-profit level ${level.tp} is not nearer than the final take profit ${asked.tp}` };
    }
  }
  return undefined;
}
