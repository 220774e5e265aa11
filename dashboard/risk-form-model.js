// The risk settings form's fields ⇄ the owner API's settings (src/domain/risk-settings.ts). Pure: no DOM, so node runs
// it too (test/unit/risk-form-model.test.ts). The server stays the one judge of what is valid: a number the owner
// mistyped is sent as typed and refused on its field, never dropped or guessed.
//
// The form's fields are a flat map keyed by each control's name, which is the API's field path ("risk.maxVolume",
// "risk.tradingHours.0.from"), so a refusal's path names the control it belongs to.
'use strict';

/** Sizing modes in the trader's words; `fields` are the mode's own settings, with their unit. */
export const SIZING_MODES = [
  { mode: 'signal', label: 'As the signal says', fields: [] },
  { mode: 'fixed', label: 'Fixed lots', fields: [{ key: 'lots', label: 'Lots per entry', unit: 'lots' }] },
  { mode: 'multiplier', label: 'Multiplier', fields: [{ key: 'factor', label: "Multiply the signal's lots by", unit: '×' }] },
  {
    mode: 'risk_percent',
    label: 'Risk a % of equity or balance',
    fields: [{ key: 'percent', label: 'Percent at risk per entry', unit: '%' }],
    choice: {
      key: 'of',
      label: 'Percent of',
      options: [
        ['equity', 'Equity'],
        ['balance', 'Balance'],
      ],
    },
  },
  { mode: 'risk_amount', label: 'Fixed amount at risk', fields: [{ key: 'amount', label: 'Amount at risk per entry', unit: 'currency' }] },
];

/** Top-level numbers: `scale` converts what the form shows to what the API takes (seconds shown, ms sent). */
export const NUMBER_RULES = [
  { key: 'maxVolume', label: 'Max volume per entry', unit: 'lots' },
  { key: 'maxOpenPositions', label: 'Max open positions (account)', unit: 'positions' },
  { key: 'maxOpenPositionsPerSymbol', label: 'Max open positions per symbol', unit: 'positions' },
  { key: 'maxSignalAgeMs', label: 'Max signal age', unit: 's', scale: 1000, hint: 'An older signal is refused; at most 86,400 s (a day).' },
];

export const FLAG_RULES = [
  { key: 'requireStopLoss', label: 'Require a stop loss on every entry' },
  { key: 'closeOnly', label: 'Close only: refuse new entries, let exits through' },
];

/**
 * Loss guards beside the daily loss and the timezone. A yes/no guard is one line here:
 * `{ key: 'name', kind: 'flag', label: '…' }` (the form shows a checkbox, the API gets true or the key left out, or
 * false when the settings loaded held false).
 */
export const GUARD_RULES = [
  { key: 'maxDrawdownPercent', kind: 'number', label: 'Max drawdown from the peak equity', unit: '%' },
  {
    key: 'stopOut',
    kind: 'flag',
    label: 'Stop-out: when the drawdown reaches the max, close every position and cancel every pending order, once',
    // The service refuses every entry while it is on and the bridge cannot carry it out (docs/risk-sizing.md).
    needs: 'stop_out',
  },
];

/** The hint of a guard that needs a bridge feature: a warning when the account's bridge has not announced it. */
export function guardHint(rule, features = []) {
  if (!rule.needs) return undefined;
  return features.includes(rule.needs)
    ? undefined
    : `This account's bridge has not announced ${rule.needs}: while this is on, every entry is refused (exits still run). The MT5 bridge 3.3.0, the cTrader connector 1.3.0 and the paper bridge carry it out.`;
}

/**
 * The account's trade management defaults (risk.management, docs/trade-management.md), in pips of each symbol as its
 * bridge knows them; `needs` is the bridge feature that carries it out.
 */
export const MANAGEMENT_RULES = [
  {
    key: 'trailDistancePips',
    label: 'Trailing stop distance',
    needs: 'trailing_stop',
    hint: 'The stop follows the best price by this much; blank: no trailing.',
  },
  {
    key: 'trailTriggerPips',
    label: 'Start trailing once in profit by',
    needs: 'trailing_stop',
    hint: 'Needs a trailing distance; 0 when blank (trail at once).',
  },
  { key: 'trailStepPips', label: 'Move the trailing stop in steps of', needs: 'trailing_stop', hint: 'Needs a trailing distance; 1 pip when blank.' },
  {
    key: 'breakevenTriggerPips',
    label: 'Move the stop to breakeven once in profit by',
    needs: 'breakeven_trigger',
    hint: 'The stop goes to the entry price (plus the offset) once; blank: no breakeven.',
  },
  {
    key: 'breakevenOffsetPips',
    label: 'Breakeven offset (profit locked)',
    needs: 'breakeven_trigger',
    hint: 'Needs a breakeven trigger and is less than it; 0 when blank.',
  },
  { key: 'maxSpreadPips', label: 'Max spread at entry', needs: 'max_spread', hint: 'An entry is refused (spread_too_wide) when the spread is wider.' },
];

/**
 * A warning when the account's bridge has not announced what the defaults set need: every entry is then refused
 * `management_unsupported` (exits still run). `set` is the keys given a value.
 */
export function managementHint(set = [], features = []) {
  const missing = [...new Set(MANAGEMENT_RULES.filter((r) => set.includes(r.key) && !features.includes(r.needs)).map((r) => r.needs))];
  if (missing.length === 0) return undefined;
  return `This account's bridge has not announced ${missing.join(', ')}: with these defaults every entry is refused (management_unsupported; exits still run). The MT5 bridge 3.6.0, the cTrader connector 1.5.0 and the paper bridge carry them out.`;
}

export const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

const RISK_KEYS = [
  'allowedSymbols',
  'blockedSymbols',
  'sizing',
  'tradingHours',
  'lossGuards',
  'management',
  ...NUMBER_RULES.map((r) => r.key),
  ...FLAG_RULES.map((r) => r.key),
];
const GUARD_KEYS = ['dailyLossAmount', 'dailyLossPercent', 'timezone', ...GUARD_RULES.map((r) => r.key)];
const MANAGEMENT_KEYS = MANAGEMENT_RULES.map((r) => r.key);
const SYMBOL_KEYS = ['aliases', 'prefix', 'suffix'];
/** The daily loss is one input and a choice of amount or percent; a refusal of either lands on the input. */
const DAILY_LOSS = 'risk.lossGuards.dailyLoss';
const DAILY_LOSS_KIND = 'risk.lossGuards.dailyLossKind';

const isObject = (v) => typeof v === 'object' && v !== null && !Array.isArray(v);
const shown = (n, scale = 1) => (typeof n === 'number' ? String(n / scale) : n === undefined ? '' : String(n));
const without = (o, keys) => Object.fromEntries(Object.entries(isObject(o) ? o : {}).filter(([k]) => !keys.includes(k)));

/** What the owner typed, as the API takes it: blank is unset; a decimal comma is a point; anything else goes as typed. */
export function parseNumber(text, scale = 1) {
  const t = String(text ?? '').trim();
  if (t === '') return undefined;
  if (!/^[+-]?(\d+([.,]\d*)?|[.,]\d+)$/.test(t)) return t;
  const n = Number(t.replace(',', '.'));
  return scale === 1 ? n : Math.round(n * scale);
}

/** Symbols separated by commas, spaces or new lines. */
export const parseSymbols = (text) =>
  String(text ?? '')
    .split(/[\s,;]+/)
    .filter(Boolean);

/** The form's fields for settings as the API answers them, and what the form does not show (the advanced JSON). */
export function settingsToFields(risk = {}, symbols = {}) {
  const f = {};
  const sizing = isObject(risk.sizing) ? risk.sizing : { mode: 'signal' };
  f['risk.sizing.mode'] = sizing.mode;
  for (const m of SIZING_MODES) {
    for (const field of m.fields) f[`risk.sizing.${field.key}`] = m.mode === sizing.mode ? shown(sizing[field.key]) : '';
    if (m.choice) f[`risk.sizing.${m.choice.key}`] = (m.mode === sizing.mode && sizing[m.choice.key]) || m.choice.options[0][0];
  }
  for (const r of NUMBER_RULES) f[`risk.${r.key}`] = shown(risk[r.key], r.scale);
  for (const r of FLAG_RULES) f[`risk.${r.key}`] = risk[r.key] === true;
  f['risk.restrictSymbols'] = Array.isArray(risk.allowedSymbols);
  f['risk.allowedSymbols'] = (risk.allowedSymbols ?? []).join(', ');
  f['risk.blockedSymbols'] = (risk.blockedSymbols ?? []).join(', ');
  f['risk.restrictHours'] = Array.isArray(risk.tradingHours);
  (risk.tradingHours ?? []).forEach((w, i) => Object.assign(f, hoursRow(i, w)));
  const guards = isObject(risk.lossGuards) ? risk.lossGuards : {};
  f[DAILY_LOSS_KIND] = guards.dailyLossPercent !== undefined ? 'percent' : guards.dailyLossAmount !== undefined ? 'amount' : '';
  f[DAILY_LOSS] = shown(guards.dailyLossPercent ?? guards.dailyLossAmount);
  f['risk.lossGuards.timezone'] = guards.timezone ?? '';
  for (const r of GUARD_RULES) f[`risk.lossGuards.${r.key}`] = r.kind === 'flag' ? guards[r.key] === true : shown(guards[r.key]);
  const management = isObject(risk.management) ? risk.management : {};
  for (const r of MANAGEMENT_RULES) f[`risk.management.${r.key}`] = shown(management[r.key]);
  Object.entries(isObject(symbols.aliases) ? symbols.aliases : {}).forEach(([from, to], i) => Object.assign(f, aliasRow(i, { from, to })));
  f['symbols.prefix'] = symbols.prefix ?? '';
  f['symbols.suffix'] = symbols.suffix ?? '';

  const chosen = SIZING_MODES.find((m) => m.mode === sizing.mode);
  const riskExtra = without(risk, RISK_KEYS);
  const sizingExtra = without(sizing, ['mode', ...(chosen?.fields.map((x) => x.key) ?? []), chosen?.choice?.key]);
  if (Object.keys(sizingExtra).length) riskExtra.sizing = sizingExtra;
  const guardExtra = without(guards, GUARD_KEYS);
  if (Object.keys(guardExtra).length) riskExtra.lossGuards = guardExtra;
  const managementExtra = without(management, MANAGEMENT_KEYS);
  if (Object.keys(managementExtra).length) riskExtra.management = managementExtra;
  const symbolsExtra = without(symbols, SYMBOL_KEYS);
  const extras = {};
  if (Object.keys(riskExtra).length) extras.risk = riskExtra;
  if (Object.keys(symbolsExtra).length) extras.symbols = symbolsExtra;
  return { fields: f, extras };
}

export const hoursRow = (i, w = {}) => ({
  [`risk.tradingHours.${i}.days`]: Array.isArray(w.days) ? [...w.days] : [1, 2, 3, 4, 5],
  [`risk.tradingHours.${i}.from`]: w.from ?? '',
  [`risk.tradingHours.${i}.to`]: w.to ?? '',
});
export const aliasRow = (i, a = {}) => ({ [`symbols.aliases.${i}.from`]: a.from ?? '', [`symbols.aliases.${i}.to`]: a.to ?? '' });

/** How many rows a list has in the fields (rows are numbered 0, 1, … without gaps). */
export function rowCount(fields, list) {
  let n = 0;
  while (Object.keys(fields).some((k) => k.startsWith(`${list}.${n}.`))) n++;
  return n;
}

/** A row list's fields with row `index` taken out and the rows after it moved up one. */
export function removeRow(fields, list, index) {
  const out = {};
  const re = new RegExp(`^${list.replaceAll('.', '\\.')}\\.(\\d+)\\.(.+)$`);
  for (const [k, v] of Object.entries(fields)) {
    const m = re.exec(k);
    if (!m) out[k] = v;
    else if (Number(m[1]) !== index) out[`${list}.${Number(m[1]) > index ? Number(m[1]) - 1 : m[1]}.${m[2]}`] = v;
  }
  return out;
}

/**
 * The settings to send: the form's fields over `extras` (fields the form does not show). `loaded` is the settings as
 * the page got them: a default the form shows (no blocked symbols, no stop loss required) is sent only if it was
 * there, so saving an unchanged form sends back exactly what was loaded.
 */
export function fieldsToSettings(f, extras = {}, loaded = {}) {
  const had = (part, key) => isObject(loaded[part]) && key in loaded[part];
  const clash = [
    ...Object.keys(without(extras.risk, ['sizing', 'lossGuards', 'management']))
      .filter((k) => RISK_KEYS.includes(k))
      .map((k) => `risk.${k}`),
    ...Object.keys(extras.risk?.lossGuards ?? {})
      .filter((k) => GUARD_KEYS.includes(k))
      .map((k) => `risk.lossGuards.${k}`),
    ...Object.keys(extras.risk?.management ?? {})
      .filter((k) => MANAGEMENT_KEYS.includes(k))
      .map((k) => `risk.management.${k}`),
    ...Object.keys(extras.symbols ?? {})
      .filter((k) => SYMBOL_KEYS.includes(k))
      .map((k) => `symbols.${k}`),
  ];
  if (clash.length) throw new Error(`The advanced JSON may hold only settings the form does not show; set ${clash.join(', ')} in the form`);

  const risk = { ...without(extras.risk, ['sizing', 'lossGuards', 'management']) };
  const mode = SIZING_MODES.find((m) => m.mode === f['risk.sizing.mode']) ?? SIZING_MODES[0];
  const sizing = { ...(extras.risk?.sizing ?? {}), mode: mode.mode };
  for (const field of mode.fields) sizing[field.key] = parseNumber(f[`risk.sizing.${field.key}`]);
  if (mode.choice) sizing[mode.choice.key] = f[`risk.sizing.${mode.choice.key}`];
  if (mode.mode !== 'signal' || Object.keys(sizing).length > 1 || had('risk', 'sizing')) risk.sizing = defined(sizing);
  for (const r of NUMBER_RULES) risk[r.key] = parseNumber(f[`risk.${r.key}`], r.scale);
  for (const r of FLAG_RULES) if (f[`risk.${r.key}`] === true || had('risk', r.key)) risk[r.key] = f[`risk.${r.key}`] === true;
  if (f['risk.restrictSymbols'] === true) risk.allowedSymbols = parseSymbols(f['risk.allowedSymbols']);
  const blocked = parseSymbols(f['risk.blockedSymbols']);
  if (blocked.length || had('risk', 'blockedSymbols')) risk.blockedSymbols = blocked;
  if (f['risk.restrictHours'] === true) {
    risk.tradingHours = Array.from({ length: rowCount(f, 'risk.tradingHours') }, (_, i) => ({
      days: [...(f[`risk.tradingHours.${i}.days`] ?? [])].map(Number).sort((a, b) => a - b),
      from: String(f[`risk.tradingHours.${i}.from`] ?? '').trim(),
      to: String(f[`risk.tradingHours.${i}.to`] ?? '').trim(),
    }));
  }
  const guards = { ...(extras.risk?.lossGuards ?? {}) };
  const dailyLoss = parseNumber(f[DAILY_LOSS]);
  // A guard chosen and left blank is sent as null, so the server refuses it on its field rather than it going unset.
  if (f[DAILY_LOSS_KIND] === 'amount') guards.dailyLossAmount = dailyLoss ?? null;
  if (f[DAILY_LOSS_KIND] === 'percent') guards.dailyLossPercent = dailyLoss ?? null;
  const timezone = String(f['risk.lossGuards.timezone'] ?? '').trim();
  if (timezone) guards.timezone = timezone;
  const hadGuard = (key) => isObject(loaded.risk?.lossGuards) && key in loaded.risk.lossGuards;
  for (const r of GUARD_RULES) {
    const v = f[`risk.lossGuards.${r.key}`];
    // An unticked guard that was stored `false` stays `false`: an unchanged form sends back what was loaded.
    if (r.kind === 'flag') {
      if (v === true || (hadGuard(r.key) && loaded.risk.lossGuards[r.key] === false)) guards[r.key] = v === true;
    } else guards[r.key] = parseNumber(v);
  }
  if (Object.values(guards).some((v) => v !== undefined) || had('risk', 'lossGuards')) risk.lossGuards = defined(guards);
  const management = { ...(extras.risk?.management ?? {}) };
  for (const r of MANAGEMENT_RULES) management[r.key] = parseNumber(f[`risk.management.${r.key}`]);
  // Every box cleared is no defaults at all: the key goes (an empty object loaded stays, so unchanged is as loaded).
  const wasEmpty = had('risk', 'management') && isObject(loaded.risk.management) && Object.keys(loaded.risk.management).length === 0;
  if (Object.values(management).some((v) => v !== undefined) || wasEmpty) risk.management = defined(management);

  const aliases = {};
  for (let i = 0; i < rowCount(f, 'symbols.aliases'); i++) {
    const from = String(f[`symbols.aliases.${i}.from`] ?? '').trim();
    const to = String(f[`symbols.aliases.${i}.to`] ?? '').trim();
    if (from || to) aliases[from] = to;
  }
  const symbols = { ...(extras.symbols ?? {}) };
  if (Object.keys(aliases).length || had('symbols', 'aliases')) symbols.aliases = aliases;
  for (const key of ['prefix', 'suffix']) if (f[`symbols.${key}`] || had('symbols', key)) symbols[key] = f[`symbols.${key}`] ?? '';
  return { risk: defined(risk), symbols };
}

/** Two alias rows with the same trader's symbol would silently become one: the form refuses that itself. */
export function duplicateAliases(f) {
  const seen = new Map();
  const dup = [];
  for (let i = 0; i < rowCount(f, 'symbols.aliases'); i++) {
    const from = String(f[`symbols.aliases.${i}.from`] ?? '')
      .trim()
      .toUpperCase();
    if (from && seen.has(from)) dup.push({ path: `symbols.aliases.${i}.from`, message: `${from} is already in row ${seen.get(from) + 1}` });
    else seen.set(from, i);
  }
  return dup;
}

/**
 * The control a refusal's path (e.g. "risk.sizing.percent", "risk.tradingHours.1.to", "symbols.aliases.XAU") belongs
 * to: the longest field name the path starts with; null when none (the form's summary shows it).
 */
export function fieldForError(path, f, message = '') {
  if (path === 'risk.lossGuards.dailyLossAmount' || path === 'risk.lossGuards.dailyLossPercent') return DAILY_LOSS;
  // The API names an alias by its trader's symbol; a bad key is the row's first box, a bad value its second.
  const alias = /^symbols\.aliases\.(.*)$/.exec(path);
  if (alias && !/^\d+\.(from|to)$/.test(alias[1])) {
    for (let i = 0; i < rowCount(f, 'symbols.aliases'); i++)
      if (String(f[`symbols.aliases.${i}.from`]).trim() === alias[1]) return `symbols.aliases.${i}.${/key/i.test(message) ? 'from' : 'to'}`;
  }
  const parts = path.split('.');
  for (let n = parts.length; n > 0; n--) {
    const name = parts.slice(0, n).join('.');
    if (name in f) return name;
  }
  return null;
}

/** The object without its undefined values (what JSON would leave out anyway), so it compares as sent. */
const defined = (o) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));

/** zod's wording, in the trader's; a bound of a field shown in other units (seconds for ms) in the units shown. */
export function plainMessage(message, path = '') {
  const scale = NUMBER_RULES.find((r) => `risk.${r.key}` === path)?.scale ?? 1;
  const bound = /^Too (big|small): expected number to be (<=|<|>=|>)(-?[\d.e+]+)$/.exec(message);
  if (bound) return `${{ '<=': 'At most', '<': 'Less than', '>=': 'At least', '>': 'More than' }[bound[2]]} ${Number(bound[3]) / scale}`;
  if (/^Invalid input: expected number, received (undefined|null)/.test(message)) return 'Required';
  if (/^Invalid input: expected number/.test(message)) return 'A number, please';
  if (/^Invalid input: expected int/.test(message)) return 'A whole number, please';
  if (/must match pattern/.test(message)) return 'A symbol: letters and digits, then also . _ # - /, at most 32 characters';
  if (/^Invalid key in record/.test(message)) return 'Not a symbol: letters and digits, then also . _ # - /';
  // The schema's words name API fields; the owner sees the form's.
  if (/^risk\.tradingHours\.\d+\.days$/.test(path) && /^Too small: expected array/.test(message)) return 'Choose at least one day';
  if (path === 'risk.management.trailDistancePips' && /need trailDistancePips/.test(message))
    return 'Needed: a trailing start or step is set, and they apply to a trailing distance';
  if (path === 'risk.management.breakevenTriggerPips' && /needs breakevenTriggerPips/.test(message))
    return 'Needed: a breakeven offset is set, and it applies to a breakeven trigger';
  if (path === 'risk.management.breakevenOffsetPips' && /less than breakevenTriggerPips/.test(message))
    return 'Must be less than the breakeven trigger (the stop moves to a price already passed)';
  if (path === 'risk.lossGuards.stopOut' && /maxDrawdownPercent/.test(message))
    return 'Needs a max drawdown from the peak equity: the stop-out acts when the drawdown reaches it';
  return message;
}
