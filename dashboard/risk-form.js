// An account's risk rules and symbol map as a form (docs/owners.md). The fields ⇄ settings mapping is pure and lives
// in risk-form-model.js; this module only builds the controls, reads them back, and puts the server's refusals on the
// controls they name. The server's validation is the only one (the same zod schemas as the admin CLI).
'use strict';

import { ApiError, api, errorText, h, when } from './dom.js?v=__VERSION__';
import { checkbox, choices, clearErrors, control, errorSlot, nextId, number, readFields, shownWhile } from './form-controls.js?v=__VERSION__';
import * as model from './risk-form-model.js?v=__VERSION__';

/** Rows with Add and Remove: every change re-renders the rows from the fields as they are, renumbered. */
function rowList(form, list, { rowOf, addLabel, renderRow }) {
  const rows = h('div', { class: 'rows' });
  const render = (fields, focus) => {
    const n = model.rowCount(fields, list);
    rows.replaceChildren(
      ...Array.from({ length: n }, (_, i) =>
        renderRow(i, fields, () => {
          const left = model.removeRow(readFields(form), list, i);
          render(left, Math.min(i, n - 2));
        }),
      ),
    );
    if (focus === undefined) return;
    (focus >= 0 ? rows.children[focus]?.querySelector('input') : add)?.focus();
  };
  const onclick = () => {
    const fields = readFields(form);
    const n = model.rowCount(fields, list);
    render({ ...fields, ...rowOf(n) }, n);
  };
  const add = h('button', { type: 'button', class: 'secondary', onclick }, addLabel);
  return { node: h('div', {}, rows, add), render };
}

function sizingPart(form, f, currency) {
  const modes = model.SIZING_MODES;
  const chosen = () => readFields(form)['risk.sizing.mode'];
  return h(
    'div',
    {},
    choices(
      'risk.sizing.mode',
      'How many lots an entry opens',
      modes.map((m) => [m.mode, m.label]),
      f['risk.sizing.mode'],
    ),
    modes.map((m) =>
      m.fields.length || m.choice
        ? shownWhile(
            form,
            h(
              'div',
              { class: 'mode-fields' },
              m.fields.map((x) => number(`risk.sizing.${x.key}`, x.label, f[`risk.sizing.${x.key}`], x.unit === 'currency' ? currency : x.unit)),
              m.choice ? choices(`risk.sizing.${m.choice.key}`, m.choice.label, m.choice.options, f[`risk.sizing.${m.choice.key}`]) : null,
              m.mode.startsWith('risk_')
                ? h('p', { class: 'hint' }, 'Lots from the stop loss distance, on the live account: an entry without a stop loss is refused.')
                : null,
            ),
            () => chosen() === m.mode,
          )
        : null,
    ),
  );
}

function hoursPart(form, f) {
  const days = model.DAYS.map((d, i) => [String(i), d]);
  const hours = rowList(form, 'risk.tradingHours', {
    rowOf: model.hoursRow,
    addLabel: 'Add a window',
    renderRow: (i, fields, remove) =>
      h(
        'fieldset',
        { class: 'row' },
        h('legend', {}, `Window ${i + 1}`),
        choices(`risk.tradingHours.${i}.days`, 'Days', days, fields[`risk.tradingHours.${i}.days`].map(String), { multi: true }),
        control(`risk.tradingHours.${i}.from`, 'From (UTC)', fields[`risk.tradingHours.${i}.from`], { placeholder: 'HH:MM', class: 'time' }),
        control(`risk.tradingHours.${i}.to`, 'To (UTC)', fields[`risk.tradingHours.${i}.to`], { placeholder: 'HH:MM', class: 'time' }),
        h('button', { type: 'button', class: 'secondary', 'aria-label': `Remove window ${i + 1}`, onclick: remove }, 'Remove'),
      ),
  });
  hours.render(f);
  return h(
    'div',
    {},
    checkbox('risk.restrictHours', 'Take entries only within these hours (UTC); exits always pass', f['risk.restrictHours']),
    shownWhile(form, hours.node, () => readFields(form)['risk.restrictHours'] === true),
  );
}

function aliasesPart(form, f) {
  const aliases = rowList(form, 'symbols.aliases', {
    rowOf: model.aliasRow,
    addLabel: 'Add an alias',
    renderRow: (i, fields, remove) =>
      h(
        'fieldset',
        { class: 'row' },
        h('legend', {}, `Alias ${i + 1}`),
        control(`symbols.aliases.${i}.from`, "Trader's symbol", fields[`symbols.aliases.${i}.from`], { autocomplete: 'off' }),
        h('span', { class: 'arrow', 'aria-hidden': 'true' }, '→'),
        control(`symbols.aliases.${i}.to`, "Broker's symbol", fields[`symbols.aliases.${i}.to`], { autocomplete: 'off' }),
        h('button', { type: 'button', class: 'secondary', 'aria-label': `Remove alias ${i + 1}`, onclick: remove }, 'Remove'),
      ),
  });
  aliases.render(f);
  return aliases.node;
}

function guardsPart(form, f, currency, features, reset) {
  const zones = h(
    'datalist',
    { id: 'time-zones' },
    [...new Set(['UTC', ...(Intl.supportedValuesOf?.('timeZone') ?? [])])].map((z) => h('option', { value: z })),
  );
  const kind = () => readFields(form)['risk.lossGuards.dailyLossKind'];
  const unitOf = (k) => (k === 'percent' ? '% of the day’s opening equity' : currency);
  const dailyLoss = number('risk.lossGuards.dailyLoss', 'Daily loss limit', f['risk.lossGuards.dailyLoss'], unitOf(f['risk.lossGuards.dailyLossKind']));
  form.addEventListener('change', () => (dailyLoss.querySelector('.unit').textContent = unitOf(kind())));
  return h(
    'fieldset',
    {},
    h('legend', {}, 'Loss guards: entries are refused past these; exits always pass'),
    control('risk.lossGuards.dailyLossKind', 'Daily loss limit as', f['risk.lossGuards.dailyLossKind'], {
      tag: 'select',
      options: [
        ['', 'No daily loss limit'],
        ['amount', `An amount (${currency})`],
        ['percent', 'A percent of the day’s opening equity'],
      ],
      hint:
        'The guard counts the fall of equity from the day’s opening equity, open positions’ floating P&L included, not the realized P&L: ' +
        'a loss closed today while open positions gain does not use it up.',
    }),
    shownWhile(form, dailyLoss, () => kind() !== ''),
    control('risk.lossGuards.timezone', 'Trading day’s time zone', f['risk.lossGuards.timezone'], {
      list: 'time-zones',
      placeholder: 'UTC',
      autocomplete: 'off',
      hint: 'IANA name, e.g. Europe/London; the trading day starts at midnight there (UTC when blank).',
    }),
    zones,
    model.GUARD_RULES.map((r) =>
      r.kind === 'flag'
        ? checkbox(`risk.lossGuards.${r.key}`, r.label, f[`risk.lossGuards.${r.key}`], { hint: model.guardHint(r, features) })
        : number(`risk.lossGuards.${r.key}`, r.label, f[`risk.lossGuards.${r.key}`], r.unit),
    ),
    reset,
  );
}

/**
 * The account's trade management defaults: pips per symbol, as the bridge knows its pip. A warning, kept current as the
 * owner types, when the bridge has not announced what the values set need.
 */
function managementPart(form, f, features) {
  const warning = h('p', { class: 'hint', role: 'status' });
  const set = () => model.MANAGEMENT_RULES.filter((r) => String(readFields(form)[`risk.management.${r.key}`] ?? '').trim() !== '').map((r) => r.key);
  const update = () => (warning.textContent = model.managementHint(set(), features) ?? '');
  form.addEventListener('input', update);
  queueMicrotask(update);
  return h(
    'fieldset',
    {},
    h('legend', {}, 'Trade management defaults: for every entry'),
    h(
      'p',
      { class: 'hint' },
      "A signal's own fields win: one that gives any trailing field uses its own trailing only, and the same for breakeven. " +
        "For the max spread the tighter of the signal's and this one wins. Blank: no default.",
    ),
    model.MANAGEMENT_RULES.map((r) => number(`risk.management.${r.key}`, r.label, f[`risk.management.${r.key}`], 'pips', r.hint)),
    warning,
  );
}

/**
 * The drawdown guard restarts from the equity the bridge sees next (the admin CLI's `account reset-drawdown`): the
 * account's settings as stored now, with the reset's instant. `blocked()` says why not now; `onDone` shows the result.
 */
function resetDrawdown(accountId, risk, blocked, onDone) {
  const out = h('p', { role: 'status' });
  const guards = risk.lossGuards;
  if (guards?.maxDrawdownPercent === undefined) return null;
  const button = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: async () => {
        out.textContent = blocked() ?? '';
        if (out.textContent) return;
        try {
          const fresh = await api('GET', `/v1/owner/accounts/${encodeURIComponent(accountId)}`);
          // The bridge applies a reset newer than the last it applied: never send one older than the last, whatever
          // this computer's clock says.
          const last = Date.parse(fresh.risk.lossGuards?.drawdownResetAt ?? '') || 0;
          const at = new Date(Math.max(Date.now(), last + 1000)).toISOString();
          const saved = await api('PATCH', `/v1/owner/accounts/${encodeURIComponent(accountId)}`, {
            risk: { ...fresh.risk, lossGuards: { ...fresh.risk.lossGuards, drawdownResetAt: at } },
          });
          onDone(saved, `Drawdown guard reset at ${when(at)}: it measures from the equity the bridge sees next.`);
        } catch (err) {
          out.textContent = err instanceof ApiError ? errorText(err) : String(err);
        }
      },
    },
    'Reset drawdown',
  );
  return h('div', {}, h('p', { class: 'hint' }, `Last reset: ${when(guards.drawdownResetAt)}`), button, out);
}

/** Each refusal on the control its path names; the rest, and a count, in the form's alert. */
function showErrors(form, details, fields, extras) {
  clearErrors(form);
  const elsewhere = [];
  let first;
  for (const d of details) {
    const top = d.path.split('.').slice(0, 2);
    const name = model.fieldForError(d.path, fields, d.message) ?? (extras[top[0]]?.[top[1]] !== undefined ? 'extras' : null);
    const slot = name && form.querySelector(`[data-error-for="${CSS.escape(name)}"]`);
    if (!slot) {
      elsewhere.push(`${d.path}: ${d.message}`);
      continue;
    }
    slot.textContent = [slot.textContent, model.plainMessage(d.message, d.path)].filter(Boolean).join('; ');
    const controls = [...form.querySelectorAll(`[name="${CSS.escape(name)}"]`)];
    for (const c of controls) if (c.type !== 'radio') c.setAttribute('aria-invalid', 'true');
    if (name === 'extras') form.querySelector('details').open = true;
    first ??= controls.find((c) => c.checked) ?? controls[0];
  }
  const count = details.length === 1 ? 'One setting was refused' : `${details.length} settings were refused`;
  form.querySelector('.summary').textContent = [`${count}: see the fields marked.`, ...elsewhere].join(' ');
  first?.focus();
}

/** The risk rules and symbol map section of an account page: a form, with the JSON of what it does not show. */
export function riskSection(account) {
  const section = h('section', {}, h('h2', {}, 'Risk rules and symbols'));
  // `kept`: the fields as the owner left them, unsaved, when the page shows settings saved by another button.
  const show = (a, status, kept) => {
    const currency = a.figures?.currency ?? 'account currency';
    const loaded = { risk: a.risk, symbols: a.symbols };
    const { fields, extras } = model.settingsToFields(a.risk, a.symbols);
    const f = kept ?? fields;
    const form = h('form', { 'aria-label': 'Risk rules and symbols', novalidate: true, class: 'risk' });
    const extrasId = nextId();
    const extrasText = h('textarea', { id: extrasId, name: 'extras', spellcheck: 'false', 'aria-describedby': `${extrasId}-hint ${extrasId}-error` });
    const extrasShown = Object.keys(extras).length ? JSON.stringify(extras, null, 2) : '';
    extrasText.value = extrasShown;
    const saved = h('p', { role: 'status', tabindex: '-1' }, status ?? '');
    form.append(
      h(
        'fieldset',
        {},
        h('legend', {}, 'Sizing'),
        sizingPart(form, f, currency),
        number('risk.maxVolume', 'Max volume per entry', f['risk.maxVolume'], 'lots'),
      ),
      h(
        'fieldset',
        {},
        h('legend', {}, 'Rules'),
        model.FLAG_RULES.map((r) => checkbox(`risk.${r.key}`, r.label, f[`risk.${r.key}`])),
        model.NUMBER_RULES.filter((r) => r.key !== 'maxVolume').map((r) => number(`risk.${r.key}`, r.label, f[`risk.${r.key}`], r.unit, r.hint)),
      ),
      h(
        'fieldset',
        {},
        h('legend', {}, 'Symbols and hours'),
        checkbox('risk.restrictSymbols', 'Trade only the symbols listed', f['risk.restrictSymbols']),
        shownWhile(
          form,
          control('risk.allowedSymbols', 'Allowed symbols', f['risk.allowedSymbols'], {
            tag: 'textarea',
            class: 'short',
            hint: 'Separated by commas or new lines; none listed means no entry.',
          }),
          () => readFields(form)['risk.restrictSymbols'] === true,
        ),
        control('risk.blockedSymbols', 'Blocked symbols', f['risk.blockedSymbols'], {
          tag: 'textarea',
          class: 'short',
          hint: 'Never opened. Separated by commas or new lines.',
        }),
        hoursPart(form, f),
      ),
      guardsPart(
        form,
        f,
        currency,
        a.bridge?.features,
        resetDrawdown(
          a.id,
          a.risk,
          // The reset changes the advanced JSON (drawdownResetAt); edits of it not saved yet would be lost.
          () => (extrasText.value === extrasShown ? null : 'Save or undo your changes to the advanced JSON first.'),
          (saved, message) => show(saved, message, readFields(form)),
        ),
      ),
      managementPart(form, f, a.bridge?.features),
      h(
        'fieldset',
        {},
        h('legend', {}, "Symbol map: the trader's symbols as your broker names them"),
        aliasesPart(form, f),
        control('symbols.prefix', 'Prefix', f['symbols.prefix'], { hint: 'Put before every symbol without an alias, e.g. "m." ' }),
        control('symbols.suffix', 'Suffix', f['symbols.suffix'], { hint: 'Put after every symbol without an alias, e.g. ".m"' }),
      ),
      h(
        'details',
        {},
        h('summary', {}, 'Advanced: settings this form does not show (JSON)'),
        h(
          'div',
          { class: 'field' },
          h('label', { for: extrasId }, 'Other settings (JSON)'),
          h('span', { class: 'hint', id: `${extrasId}-hint` }, '{"risk": {…}, "symbols": {…}}: kept as they are and saved with the form.'),
          extrasText,
          errorSlot(`${extrasId}-error`, 'extras'),
        ),
      ),
      h('div', {}, h('button', { type: 'submit' }, 'Save')),
      h('p', { role: 'alert', class: 'summary' }),
      saved,
    );
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      clearErrors(form);
      form.querySelector('.summary').textContent = '';
      saved.textContent = '';
      const fields = readFields(form);
      let extra;
      try {
        extra = extrasText.value.trim() ? JSON.parse(extrasText.value) : {};
        if (typeof extra !== 'object' || extra === null || Array.isArray(extra) || Object.keys(extra).some((k) => k !== 'risk' && k !== 'symbols'))
          throw new Error('an object with "risk" and "symbols" only');
      } catch (err) {
        return showErrors(form, [{ path: 'extras', message: `Not valid: ${err.message}` }], { extras: '' }, {});
      }
      const duplicates = model.duplicateAliases(fields);
      if (duplicates.length) return showErrors(form, duplicates, fields, extra);
      let body;
      try {
        body = model.fieldsToSettings(fields, extra, loaded);
      } catch (err) {
        return showErrors(form, [{ path: 'extras', message: err.message }], { extras: '' }, {});
      }
      try {
        const after = await api('PATCH', `/v1/owner/accounts/${encodeURIComponent(a.id)}`, body);
        show(after, 'Saved: the next signal uses these settings.');
      } catch (err) {
        if (err instanceof ApiError && Array.isArray(err.body?.details)) showErrors(form, err.body.details, fields, extra);
        else form.querySelector('.summary').textContent = err instanceof ApiError ? errorText(err) : String(err);
      }
    });
    section.replaceChildren(section.firstChild, form);
    if (status) saved.focus();
  };
  show(account);
  return section;
}
