import fc from 'fast-check';
import { riskSettingsSchema, symbolMapSchema } from '../../src/domain/risk-settings';

/**
 * The dashboard's risk form ⇄ settings mapping (dashboard/risk-form-model.js), in node: saving an unchanged form sends
 * back exactly the settings loaded (fields the form does not know included), what the owner types becomes the settings
 * the API takes, and every refusal the API gives for what the form sends names a control of the form.
 */
// The module is the browser's own file, plain JavaScript: jest compiles it (jest.config.js) and it has no types.
const model = jest.requireActual('../../dashboard/risk-form-model.js');

const parseRisk = (r: unknown) => riskSettingsSchema.parse(r);
const parseSymbols = (s: unknown) => symbolMapSchema.parse(s);

/** Load → (the advanced JSON as the page shows and reads it) → save, unchanged. */
function roundTrip(risk: object, symbols: object) {
  const { fields, extras } = model.settingsToFields(risk, symbols);
  const shownJson = JSON.parse(JSON.stringify(extras));
  return model.fieldsToSettings(fields, shownJson, { risk, symbols });
}

const full = {
  risk: parseRisk({
    allowedSymbols: ['EURUSD', 'XAUUSD'],
    blockedSymbols: ['BTCUSD'],
    maxVolume: 5,
    sizing: { mode: 'risk_percent', of: 'balance', percent: 1.5 },
    requireStopLoss: true,
    maxOpenPositions: 3,
    maxOpenPositionsPerSymbol: 1,
    tradingHours: [
      { days: [1, 2, 3, 4, 5], from: '07:00', to: '21:00' },
      { days: [0], from: '22:00', to: '24:00' },
    ],
    maxSignalAgeMs: 1500,
    closeOnly: false,
    lossGuards: { dailyLossPercent: 3, timezone: 'Europe/London', maxDrawdownPercent: 10, drawdownResetAt: '2026-11-20T10:00:00.000Z' },
    management: { trailDistancePips: 15, trailTriggerPips: 0, trailStepPips: 2.5, breakevenTriggerPips: 10, breakevenOffsetPips: 1, maxSpreadPips: 1.5 },
  }),
  symbols: parseSymbols({ aliases: { XAUUSD: 'GOLD', US30: 'DJ30.cash' }, prefix: 'm.', suffix: '.m' }),
};

describe('saving an unchanged form sends back what was loaded', () => {
  test.each([
    ['every field the form shows', full.risk, full.symbols],
    ['the defaults a parsed registry holds', parseRisk({}), parseSymbols({})],
    ['nothing at all', {}, {}],
    ['no symbol allowed, no trading hours, no window (both differ from unset)', parseRisk({ allowedSymbols: [], tradingHours: [] }), parseSymbols({})],
    ['fixed lots', parseRisk({ sizing: { mode: 'fixed', lots: 0.25 } }), {}],
    ['a multiplier', parseRisk({ sizing: { mode: 'multiplier', factor: 2 } }), {}],
    ['an amount at risk and a daily loss amount', parseRisk({ sizing: { mode: 'risk_amount', amount: 150 }, lossGuards: { dailyLossAmount: 500 } }), {}],
    ['a time zone alone', parseRisk({ lossGuards: {} }), {}],
    ['a stop-out switched off (the admin CLI may store false)', parseRisk({ lossGuards: { maxDrawdownPercent: 10, stopOut: false } }), {}],
    ['management defaults: a max spread alone', parseRisk({ management: { maxSpreadPips: 2 } }), {}],
    ['management defaults stored empty (the API takes {})', parseRisk({ management: {} }), {}],
  ])('%s', (_name, risk, symbols) => {
    expect(roundTrip(risk, symbols)).toEqual({ risk, symbols });
  });

  test('settings the form does not know (a newer service, a guard added later) are in the advanced JSON and kept', () => {
    const risk = { ...full.risk, newRule: { x: 1 }, sizing: { ...full.risk.sizing, cap: 2 }, lossGuards: { ...full.risk.lossGuards!, laterGuard: true } };
    const symbols = { ...full.symbols, separator: '-' };
    const { extras } = model.settingsToFields(risk, symbols);
    expect(extras).toEqual({
      risk: { newRule: { x: 1 }, sizing: { cap: 2 }, lossGuards: { drawdownResetAt: '2026-11-20T10:00:00.000Z', laterGuard: true } },
      symbols: { separator: '-' },
    });
    expect(roundTrip(risk, symbols)).toEqual({ risk, symbols });
  });

  test('any settings the API holds (generated)', () => {
    const num = (max: number) => fc.double({ min: 0.01, max, noNaN: true }).map((n) => Math.round(n * 100) / 100);
    const symbol = fc.constantFrom('EURUSD', 'XAUUSD', 'US30', 'BTCUSD', 'GER40.cash');
    const sizing = fc.oneof(
      fc.constant({ mode: 'signal' }),
      num(100).map((lots) => ({ mode: 'fixed', lots })),
      num(100).map((factor) => ({ mode: 'multiplier', factor })),
      fc.record({ mode: fc.constant('risk_percent'), of: fc.constantFrom('equity', 'balance'), percent: num(10) }),
      num(1e6).map((amount) => ({ mode: 'risk_amount', amount })),
    );
    const window = fc.record({
      days: fc.uniqueArray(fc.integer({ min: 0, max: 6 }), { minLength: 1 }).map((d) => d.sort((a, b) => a - b)),
      from: fc.constantFrom('00:00', '07:30', '22:00'),
      to: fc.constantFrom('12:00', '24:00'),
    });
    const guards = fc.record(
      {
        daily: fc.oneof(
          num(1e5).map((dailyLossAmount) => ({ dailyLossAmount })),
          num(100).map((dailyLossPercent) => ({ dailyLossPercent })),
        ),
        timezone: fc.constantFrom('UTC', 'Europe/London', 'America/New_York'),
        maxDrawdownPercent: num(100),
        stopOut: fc.boolean(),
      },
      { requiredKeys: [] },
    );
    const risk = fc.record(
      {
        allowedSymbols: fc.uniqueArray(symbol),
        blockedSymbols: fc.uniqueArray(symbol),
        maxVolume: num(100),
        sizing,
        requireStopLoss: fc.boolean(),
        maxOpenPositions: fc.integer({ min: 0, max: 50 }),
        maxOpenPositionsPerSymbol: fc.integer({ min: 0, max: 50 }),
        tradingHours: fc.array(window, { maxLength: 3 }),
        maxSignalAgeMs: fc.integer({ min: 1, max: 86_400_000 }),
        closeOnly: fc.boolean(),
        management: fc
          .record({ trail: num(100), trigger: num(100), step: num(10), be: num(100), spread: num(10) }, { requiredKeys: [] })
          .map(({ trail, trigger, step, be, spread }) => ({
            ...(trail !== undefined
              ? {
                  trailDistancePips: trail,
                  ...(trigger !== undefined ? { trailTriggerPips: trigger } : {}),
                  ...(step !== undefined ? { trailStepPips: step } : {}),
                }
              : {}),
            ...(be !== undefined ? { breakevenTriggerPips: be, ...(be > 0.5 ? { breakevenOffsetPips: Math.round(be * 25) / 100 } : {}) } : {}),
            ...(spread !== undefined ? { maxSpreadPips: spread } : {}),
          })),
        // The stop-out needs a max drawdown (the API refuses it alone).
        lossGuards: guards.map(({ daily, stopOut, ...rest }) => ({
          ...daily,
          ...rest,
          ...(stopOut !== undefined && (!stopOut || rest.maxDrawdownPercent !== undefined) ? { stopOut } : {}),
        })),
      },
      { requiredKeys: [] },
    );
    const symbols = fc.record(
      { aliases: fc.dictionary(symbol, symbol), prefix: fc.constantFrom('', 'm.'), suffix: fc.constantFrom('', '.m', '-ecn') },
      { requiredKeys: [] },
    );
    fc.assert(
      fc.property(risk, symbols, fc.boolean(), (r, s, parsed) => {
        const [rr, ss] = parsed ? [parseRisk(r), parseSymbols(s)] : [r, s];
        expect(roundTrip(rr, ss)).toEqual({ risk: rr, symbols: ss });
      }),
      { numRuns: 300 },
    );
  });
});

describe('what the owner types becomes the settings', () => {
  const empty = () => model.settingsToFields(parseRisk({}), parseSymbols({}));

  test('risk 1,5 % of balance, a daily loss of 3 % in New York, a max signal age of 2.5 s, one window, one alias', () => {
    const { fields } = empty();
    Object.assign(fields, {
      'risk.sizing.mode': 'risk_percent',
      'risk.sizing.percent': '1,5',
      'risk.sizing.of': 'balance',
      'risk.maxSignalAgeMs': '2.5',
      'risk.lossGuards.dailyLossKind': 'percent',
      'risk.lossGuards.dailyLoss': ' 3 ',
      'risk.lossGuards.timezone': 'America/New_York',
      'risk.restrictSymbols': true,
      'risk.allowedSymbols': 'EURUSD, XAUUSD\nUS30',
      'risk.restrictHours': true,
      ...model.hoursRow(0, { days: [5, 1], from: '08:00', to: '17:00' }),
      ...model.aliasRow(0, { from: 'XAUUSD', to: 'GOLD' }),
      ...model.aliasRow(1, { from: '', to: '' }),
    });
    const settings = model.fieldsToSettings(fields, {}, { risk: parseRisk({}), symbols: parseSymbols({}) });
    expect(settings).toEqual({
      risk: {
        allowedSymbols: ['EURUSD', 'XAUUSD', 'US30'],
        blockedSymbols: [],
        sizing: { mode: 'risk_percent', of: 'balance', percent: 1.5 },
        requireStopLoss: false,
        closeOnly: false,
        maxSignalAgeMs: 2500,
        tradingHours: [{ days: [1, 5], from: '08:00', to: '17:00' }],
        lossGuards: { dailyLossPercent: 3, timezone: 'America/New_York' },
      },
      symbols: { aliases: { XAUUSD: 'GOLD' }, prefix: '', suffix: '' },
    });
    expect(riskSettingsSchema.parse(settings.risk)).toEqual({ ...settings.risk });
  });

  test('a number mistyped goes as typed, and a chosen daily loss left blank as null, for the server to refuse on its field', () => {
    const { fields } = empty();
    Object.assign(fields, {
      'risk.sizing.mode': 'fixed',
      'risk.sizing.lots': '',
      'risk.maxSignalAgeMs': '90000',
      'risk.maxVolume': '2 lots',
      'risk.maxOpenPositions': '1.5',
      'risk.lossGuards.dailyLossKind': 'amount',
      'risk.restrictHours': true,
      ...model.hoursRow(0, { days: [], from: '25:00', to: '9' }),
      ...model.aliasRow(0, { from: 'XAU USD', to: 'GOLD' }),
      ...model.aliasRow(1, { from: 'US30', to: 'bad symbol' }),
    });
    const settings = model.fieldsToSettings(fields, {}, {});
    expect(settings.risk.maxVolume).toBe('2 lots');
    expect(settings.risk.lossGuards).toEqual({ dailyLossAmount: null });
    const issues = [
      ...riskSettingsSchema.safeParse(settings.risk).error!.issues.map((i) => ({ ...i, path: ['risk', ...i.path] })),
      ...symbolMapSchema.safeParse(settings.symbols).error!.issues.map((i) => ({ ...i, path: ['symbols', ...i.path] })),
    ].map((i) => ({ path: i.path.join('.'), message: i.message }));
    const placed = issues.map((i) => [i.path, model.fieldForError(i.path, fields, i.message), model.plainMessage(i.message, i.path)]);
    expect(placed).toEqual(
      expect.arrayContaining([
        ['risk.sizing.lots', 'risk.sizing.lots', 'Required'],
        ['risk.maxVolume', 'risk.maxVolume', 'A number, please'],
        ['risk.maxOpenPositions', 'risk.maxOpenPositions', 'A whole number, please'],
        ['risk.maxSignalAgeMs', 'risk.maxSignalAgeMs', 'At most 86400'],
        ['risk.lossGuards.dailyLossAmount', 'risk.lossGuards.dailyLoss', 'Required'],
        ['risk.tradingHours.0.days', 'risk.tradingHours.0.days', 'Choose at least one day'],
        ['risk.tradingHours.0.from', 'risk.tradingHours.0.from', 'HH:MM'],
        ['risk.tradingHours.0.to', 'risk.tradingHours.0.to', 'HH:MM'],
        ['symbols.aliases.XAU USD', 'symbols.aliases.0.from', expect.stringMatching(/^Not a symbol/)],
        ['symbols.aliases.US30', 'symbols.aliases.1.to', expect.stringMatching(/^A symbol/)],
      ]),
    );
    // Every refusal of what the form sends lands on one of its controls.
    expect(placed.filter(([, name]) => name === null || !(name! in fields))).toEqual([]);
  });

  test('bounds are said in the units the form shows', () => {
    expect(model.plainMessage('Too big: expected number to be <=10', 'risk.sizing.percent')).toBe('At most 10');
    expect(model.plainMessage('Too small: expected number to be >0', 'risk.maxVolume')).toBe('More than 0');
    expect(model.plainMessage('Too small: expected number to be >=1', 'risk.maxSignalAgeMs')).toBe('At least 0.001');
    expect(model.plainMessage('HH:MM', 'risk.tradingHours.0.from')).toBe('HH:MM');
  });

  test('a setting the form shows cannot also be given in the advanced JSON', () => {
    const { fields } = empty();
    expect(() => model.fieldsToSettings(fields, { risk: { maxVolume: 3 } }, {})).toThrow(/risk\.maxVolume in the form/);
    expect(() => model.fieldsToSettings(fields, { risk: { lossGuards: { timezone: 'UTC' } } }, {})).toThrow(/risk\.lossGuards\.timezone/);
    expect(() => model.fieldsToSettings(fields, { symbols: { suffix: '.m' } }, {})).toThrow(/symbols\.suffix/);
  });

  test('the stop-out is a checkbox of the loss guards: checked sends stopOut true, unchecked leaves it out', () => {
    const risk = parseRisk({ lossGuards: { maxDrawdownPercent: 10, stopOut: true } });
    const { fields } = model.settingsToFields(risk, parseSymbols({}));
    expect(fields['risk.lossGuards.stopOut']).toBe(true);
    expect(roundTrip(risk, parseSymbols({}))).toEqual({ risk, symbols: parseSymbols({}) });
    const loaded = { risk, symbols: parseSymbols({}) };
    const unchecked = model.fieldsToSettings({ ...fields, 'risk.lossGuards.stopOut': false }, model.settingsToFields(risk, parseSymbols({})).extras, loaded);
    expect(unchecked.risk.lossGuards).not.toHaveProperty('stopOut');
    expect(unchecked.risk.lossGuards).toMatchObject({ maxDrawdownPercent: 10 });
  });

  test('a stop-out without a max drawdown is refused on its checkbox, in the form’s words', () => {
    const fields = { ...model.settingsToFields(parseRisk({}), parseSymbols({})).fields, 'risk.lossGuards.stopOut': true };
    const sent = model.fieldsToSettings(fields, {}, {});
    const issues = riskSettingsSchema.safeParse(sent.risk).error!.issues.map((i) => ({ path: ['risk', ...i.path].join('.'), message: i.message }));
    expect(issues.map((i) => [model.fieldForError(i.path, fields, i.message), model.plainMessage(i.message, i.path)])).toEqual([
      ['risk.lossGuards.stopOut', expect.stringMatching(/^Needs a max drawdown from the peak equity/)],
    ]);
  });

  test('the stop-out warns, on its checkbox, when the account’s bridge has not announced stop_out (its entries would be refused)', () => {
    const stopOut = model.GUARD_RULES.find((r: { key: string }) => r.key === 'stopOut');
    expect(model.guardHint(stopOut, ['risk_sizing', 'loss_guards'])).toMatch(/has not announced stop_out: while this is on, every entry is refused/);
    expect(model.guardHint(stopOut, [])).toMatch(/every entry is refused/);
    expect(model.guardHint(stopOut, ['loss_guards', 'stop_out'])).toBeUndefined();
    expect(
      model.guardHint(
        model.GUARD_RULES.find((r: { key: string }) => r.key === 'maxDrawdownPercent'),
        [],
      ),
    ).toBeUndefined();
  });

  test('a yes/no guard is one line in GUARD_RULES: a checkbox field, true sent, false left out', () => {
    model.GUARD_RULES.push({ key: 'exampleFlag', kind: 'flag', label: 'An example' });
    try {
      const on = model.settingsToFields(parseRisk({ lossGuards: { maxDrawdownPercent: 5 } }), {});
      expect(on.fields['risk.lossGuards.exampleFlag']).toBe(false);
      on.fields['risk.lossGuards.exampleFlag'] = true;
      expect(model.fieldsToSettings(on.fields, on.extras, {}).risk.lossGuards).toEqual({ maxDrawdownPercent: 5, timezone: 'UTC', exampleFlag: true });
    } finally {
      model.GUARD_RULES.pop();
    }
  });
});

describe('trade management defaults', () => {
  const empty = () => model.settingsToFields(parseRisk({}), parseSymbols({}));
  const typed = (values: Record<string, string>) => {
    const { fields } = empty();
    for (const [k, v] of Object.entries(values)) fields[`risk.management.${k}`] = v;
    return fields;
  };
  const refusals = (fields: Record<string, unknown>) => {
    const sent = model.fieldsToSettings(fields, {}, {});
    const parsed = riskSettingsSchema.safeParse(sent.risk);
    return (parsed.error?.issues ?? []).map((i) => {
      const path = ['risk', ...i.path].join('.');
      return [model.fieldForError(path, fields, i.message), model.plainMessage(i.message, path)];
    });
  };

  test('typed pips (a decimal comma too) become risk.management as the API takes it; blank boxes are left out', () => {
    const sent = model.fieldsToSettings(typed({ trailDistancePips: '15', trailStepPips: '2,5', breakevenTriggerPips: '10', maxSpreadPips: '1.5' }), {}, {});
    expect(sent.risk.management).toEqual({ trailDistancePips: 15, trailStepPips: 2.5, breakevenTriggerPips: 10, maxSpreadPips: 1.5 });
    expect(riskSettingsSchema.parse(sent.risk).management).toEqual(sent.risk.management);
  });

  test('every box cleared: no defaults, the key goes (the API stores none)', () => {
    const risk = parseRisk({ management: { trailDistancePips: 15, maxSpreadPips: 2 } });
    const { fields, extras } = model.settingsToFields(risk, parseSymbols({}));
    expect(fields['risk.management.trailDistancePips']).toBe('15');
    for (const r of model.MANAGEMENT_RULES) fields[`risk.management.${r.key}`] = '';
    const sent = model.fieldsToSettings(fields, extras, { risk, symbols: parseSymbols({}) });
    expect(sent.risk).not.toHaveProperty('management');
  });

  test("the schema's rules land on the box they concern, in the form's words", () => {
    expect(refusals(typed({ trailStepPips: '2' }))).toEqual([
      ['risk.management.trailDistancePips', expect.stringMatching(/^Needed: a trailing start or step/)],
    ]);
    expect(refusals(typed({ breakevenOffsetPips: '2' }))).toEqual([
      ['risk.management.breakevenTriggerPips', expect.stringMatching(/^Needed: a breakeven offset is set/)],
    ]);
    expect(refusals(typed({ breakevenTriggerPips: '5', breakevenOffsetPips: '5' }))).toEqual([
      ['risk.management.breakevenOffsetPips', expect.stringMatching(/^Must be less than the breakeven trigger/)],
    ]);
    expect(refusals(typed({ trailDistancePips: '0', maxSpreadPips: 'wide' }))).toEqual(
      expect.arrayContaining([
        ['risk.management.trailDistancePips', 'More than 0'],
        ['risk.management.maxSpreadPips', 'A number, please'],
      ]),
    );
    expect(refusals(typed({ maxSpreadPips: '2000000' }))).toEqual([['risk.management.maxSpreadPips', 'At most 1000000']]);
    expect(refusals(typed({ trailDistancePips: '20', trailTriggerPips: '0', breakevenTriggerPips: '8', breakevenOffsetPips: '0' }))).toEqual([]);
  });

  test('a setting of the management boxes cannot also be given in the advanced JSON', () => {
    expect(() => model.fieldsToSettings(empty().fields, { risk: { management: { maxSpreadPips: 1 } } }, {})).toThrow(/risk\.management\.maxSpreadPips/);
  });

  test("the form warns when the account's bridge has not announced what the defaults set need", () => {
    expect(model.managementHint(['trailDistancePips', 'maxSpreadPips'], ['trade_events'])).toMatch(
      /has not announced trailing_stop, max_spread: with these defaults every entry is refused \(management_unsupported/,
    );
    expect(model.managementHint(['breakevenTriggerPips'], ['breakeven_trigger'])).toBeUndefined();
    expect(model.managementHint([], [])).toBeUndefined();
  });
});

describe('rows', () => {
  test('removing a row moves the rows after it up, so the API index names the row on screen', () => {
    const fields = {
      x: 1,
      ...model.aliasRow(0, { from: 'A', to: 'a' }),
      ...model.aliasRow(1, { from: 'B', to: 'b' }),
      ...model.aliasRow(2, { from: 'C', to: 'c' }),
    };
    const left = model.removeRow(fields, 'symbols.aliases', 1);
    expect(left).toEqual({ x: 1, ...model.aliasRow(0, { from: 'A', to: 'a' }), ...model.aliasRow(1, { from: 'C', to: 'c' }) });
    expect(model.rowCount(left, 'symbols.aliases')).toBe(2);
  });

  test('two aliases for one trader’s symbol are refused on the second row (they would silently become one)', () => {
    const fields = { ...model.aliasRow(0, { from: 'XAUUSD', to: 'GOLD' }), ...model.aliasRow(1, { from: 'xauusd ', to: 'XAU' }) };
    expect(model.duplicateAliases(fields)).toEqual([{ path: 'symbols.aliases.1.from', message: 'XAUUSD is already in row 1' }]);
  });
});
