import { ACTIONS } from './actions';
import type { ValidationDetail } from './signal';

/**
 * The one-line alert (issue 27), for traders coming from PineConnector: `secret,action[,symbol][,key=value…]`, read
 * into exactly the object a JSON body would be, which then goes through the same validation (validateSignal). This
 * file only reads the line: it knows the keys and the type of each value, never what an action needs.
 *
 * Decisions (docs/decisions.md, "One-line alerts"):
 * - Keys are the JSON field names, matched without regard to case, plus a few peers' names (ALIASES). A key's meaning
 *   never changes with its spelling: `sl`/`tp` are prices here as in JSON; PineConnector's pip `sl=20` is `slpips=20`.
 * - `risk=` is refused, not read as a volume: PineConnector reads it as lots, dollars or a percent of the balance
 *   depending on an EA setting, so `risk=1` could mean 1 lot or 1 %; a wrong guess is a 100× order. `vol_lots=` is
 *   PineConnector's unambiguous lots and is taken.
 * - Numbers as JSON writes them, without an exponent (no `1e999`, hex, `+1`, `.5`, `NaN`, empty); booleans
 *   `true`/`false`. Anything else is a 400 naming the token, before the secret is looked up (like malformed JSON).
 */

export const ALERT_LINE_LIMITS = { maxTokens: 64, maxTokenLength: 256, maxTakeProfitLevels: 5 } as const;

type Kind = 'string' | 'number' | 'boolean';

/** Every field a one-line alert may set, with the type of its value; `secret` and `action` are positional. */
export const ALERT_LINE_FIELDS = {
  symbol: 'string',
  volume: 'number',
  price: 'number',
  stopLimitPrice: 'number',
  sl: 'number',
  tp: 'number',
  slPips: 'number',
  tpPips: 'number',
  positionId: 'string',
  orderId: 'string',
  partialVolume: 'number',
  expiry: 'string',
  side: 'string',
  pnl: 'string',
  idempotencyKey: 'string',
  // Trade management (docs/trade-management.md §1).
  trailDistancePips: 'number',
  trailTriggerPips: 'number',
  trailStepPips: 'number',
  breakevenTriggerPips: 'number',
  breakevenOffsetPips: 'number',
  closeOpposite: 'boolean',
  maxSpreadPips: 'number',
} as const satisfies Record<string, Kind>;

export type AlertLineField = keyof typeof ALERT_LINE_FIELDS;

/** Peers' names for our fields (lower case). Each means exactly what the field means. */
export const ALERT_LINE_ALIASES: Record<string, AlertLineField> = {
  vol_lots: 'volume',
  sl_price: 'sl',
  tp_price: 'tp',
  sl_pips: 'slPips',
  tp_pips: 'tpPips',
  traildist: 'trailDistancePips',
  trailtrig: 'trailTriggerPips',
  trailstep: 'trailStepPips',
  betrigger: 'breakevenTriggerPips',
  beoffset: 'breakevenOffsetPips',
  spread: 'maxSpreadPips',
  maxspread: 'maxSpreadPips',
};

/** Keys refused with a reason of their own rather than "unknown". */
const REFUSED_KEYS: Record<string, string> = {
  secret: 'the secret is the first token, not a key',
  action: 'the action is the second token, not a key',
  meta: 'meta cannot be set in a one-line alert; origin=… sets meta.origin',
  takeprofits: 'take-profit levels are written tp1=… or tp1pips=…, with tp1close=… (up to tp5)',
  risk:
    'risk= is not read: PineConnector reads it as lots, dollars or a percent of the balance depending on an EA setting; ' +
    'write volume=<lots> (or vol_lots=<lots>)',
};

/** PineConnector's order commands, for a hint when one is used as the action. */
const PEER_ACTIONS: Record<string, string> = {
  buylimit: 'buy_limit',
  selllimit: 'sell_limit',
  buystop: 'buy_stop',
  sellstop: 'sell_stop',
  closelong: 'close with side=buy',
  closeshort: 'close with side=sell',
  closeall: 'close_all',
};

/** Own keys only: a line's `constructor=` or `__proto__=` must not find Object.prototype's. */
const lookup = <T>(table: Record<string, T>, key: string): T | undefined => (Object.hasOwn(table, key) ? table[key] : undefined);
const CANONICAL = new Map<string, AlertLineField>(Object.keys(ALERT_LINE_FIELDS).map((f) => [f.toLowerCase(), f as AlertLineField]));
const LEVEL_KEY = /^tp(\d+)(pips|close)?$/;
const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?$/;
/**
 * The longest text a refusal repeats back: shorter than any credential (16 characters at least, src/domain/account.ts),
 * so a secret put in the wrong token is never echoed, not even in part.
 */
const ECHO_MAX = 15;

export type AlertLineResult = { ok: true; body: Record<string, unknown> } | { ok: false; error: string; details: ValidationDetail[] };

interface Token {
  /** 1-based, as the trader counts. */
  n: number;
  text: string;
}

type LevelPart = 'tp' | 'tpPips' | 'closePercent';

/** Reads a one-line alert. Pure; bounded by ALERT_LINE_LIMITS whatever the input. */
export function parseAlertLine(line: string): AlertLineResult {
  const problems: ValidationDetail[] = [];
  const fail = (t: Token | number, message: string, path = '') => problems.push({ path, message: `${label(t)}: ${message}` });

  const pieces = line.trim().split(',', ALERT_LINE_LIMITS.maxTokens + 1);
  if (pieces.length > ALERT_LINE_LIMITS.maxTokens) {
    fail(ALERT_LINE_LIMITS.maxTokens + 1, `more than ${ALERT_LINE_LIMITS.maxTokens} tokens`);
    return refused(problems);
  }
  const tokens = pieces.map((text, i) => ({ n: i + 1, text: text.trim() }));
  for (const t of tokens) {
    if (t.text.length > ALERT_LINE_LIMITS.maxTokenLength) fail(t, `longer than ${ALERT_LINE_LIMITS.maxTokenLength} characters`);
  }
  if (problems.length > 0) return refused(problems);

  const [secret, action, ...rest] = tokens;
  const body: Record<string, unknown> = {};
  if (!secret || secret.text === '') fail(1, 'the secret is missing (the line is `secret,action[,symbol][,key=value…]`)', 'secret');
  else body.secret = secret.text;
  if (!action || action.text === '') fail(2, 'the action is missing', 'action');
  else if (!(ACTIONS as readonly string[]).includes(action.text)) fail(action, unknownAction(action.text), 'action');
  else body.action = action.text;

  const seen = new Map<string, Token>();
  const levels = new Map<number, { first: Token; parts: Partial<Record<LevelPart, number>> }>();
  const claim = (t: Token, name: string, path: string): boolean => {
    const earlier = seen.get(name);
    if (earlier) {
      fail(t, `${name} given twice (also token ${earlier.n})`, path);
      return false;
    }
    seen.set(name, t);
    return true;
  };

  rest.forEach((t, i) => {
    const eq = t.text.indexOf('=');
    if (eq < 0) {
      // Only the third token may stand alone: the symbol.
      if (i === 0 && t.text !== '') {
        if (claim(t, 'symbol', 'symbol')) body.symbol = t.text;
      } else fail(t, t.text === '' ? 'empty (two commas in a row?)' : 'expected key=value');
      return;
    }
    const key = t.text.slice(0, eq).trim();
    const raw = t.text.slice(eq + 1).trim();
    const lower = key.toLowerCase();
    if (key === '') return void fail(t, 'no key before =');
    if (raw === '') return void fail(t, `no value for ${echoed(key)}`);

    const level = LEVEL_KEY.exec(lower);
    if (level) {
      const index = Number(level[1]);
      const part: LevelPart = level[2] === 'pips' ? 'tpPips' : level[2] === 'close' ? 'closePercent' : 'tp';
      const path = `takeProfits.${index - 1}.${part}`;
      if (!(index >= 1 && index <= ALERT_LINE_LIMITS.maxTakeProfitLevels && String(index) === level[1])) {
        return void fail(t, `take-profit levels are tp1 to tp${ALERT_LINE_LIMITS.maxTakeProfitLevels}`);
      }
      const value = readValue(raw, 'number');
      if (!value.ok) return void fail(t, value.message, path);
      if (!claim(t, path, path)) return;
      const entry = levels.get(index) ?? { first: t, parts: {} };
      entry.parts[part] = value.value as number;
      levels.set(index, entry);
      return;
    }
    if (lower === 'origin') {
      if (claim(t, 'meta.origin', 'meta.origin')) body.meta = { origin: raw };
      return;
    }
    const refusedWhy = lookup(REFUSED_KEYS, lower);
    if (refusedWhy) return void fail(t, refusedWhy);
    const field = CANONICAL.get(lower) ?? lookup(ALERT_LINE_ALIASES, lower);
    if (!field) return void fail(t, `unknown key ${echoed(key)}`);
    const value = readValue(raw, ALERT_LINE_FIELDS[field]);
    if (!value.ok) return void fail(t, `${field}: ${value.message}`, field);
    if (claim(t, field, field)) body[field] = value.value;
  });

  if (levels.size > 0) {
    const indexes = [...levels.keys()].sort((a, b) => a - b);
    indexes.forEach((index, i) => {
      if (index !== i + 1) fail(levels.get(index)!.first, `take-profit level ${index} without level ${i + 1}`, `takeProfits.${i}`);
    });
    body.takeProfits = indexes.map((index) => levels.get(index)!.parts);
  }
  return problems.length > 0 ? refused(problems) : { ok: true, body };
}

function readValue(raw: string, kind: Kind): { ok: true; value: unknown } | { ok: false; message: string } {
  if (kind === 'string') return { ok: true, value: raw };
  if (kind === 'boolean') {
    if (raw === 'true' || raw === 'false') return { ok: true, value: raw === 'true' };
    return { ok: false, message: 'expected true or false' };
  }
  const value = NUMBER.test(raw) ? Number(raw) : NaN;
  if (!Number.isFinite(value)) return { ok: false, message: 'expected a number written like 0.1 or 20 (no exponent, no quotes)' };
  return { ok: true, value };
}

function unknownAction(text: string): string {
  const hint = lookup(PEER_ACTIONS, text.toLowerCase()) ?? ((ACTIONS as readonly string[]).includes(text.toLowerCase()) ? text.toLowerCase() : undefined);
  return `unknown action${hint ? `; did you mean ${hint}?` : ''} (one of ${ACTIONS.join(', ')})`;
}

/**
 * `token 4 "vol=abc"`; the first token is the secret and is never repeated back, and of any other only a key and a
 * value each at most ECHO_MAX long: `token 3 "idempotencyKey=…"`.
 */
/** A key as the trader wrote it, when short enough to repeat (label). */
const echoed = (key: string): string => (key.length <= ECHO_MAX ? key : '(too long to repeat)');

function label(t: Token | number): string {
  if (typeof t === 'number') return `token ${t}`;
  if (t.n === 1) return 'token 1 (the secret)';
  const eq = t.text.indexOf('=');
  const [key, value] = eq < 0 ? ['', t.text] : [t.text.slice(0, eq + 1), t.text.slice(eq + 1)];
  if (key.length > ECHO_MAX + 1) return `token ${t.n} (not repeated: long enough to be a secret)`;
  if (value.length > ECHO_MAX) return key === '' ? `token ${t.n} (not repeated: long enough to be a secret)` : `token ${t.n} ${JSON.stringify(`${key}…`)}`;
  return `token ${t.n} ${JSON.stringify(t.text)}`;
}

function refused(details: ValidationDetail[]): AlertLineResult {
  return { ok: false, error: `Invalid one-line alert: ${details.map((d) => d.message).join('; ')}`, details };
}
