// Form controls named by the owner API's field paths, so a refusal's path finds its control: each with a label, its
// unit and hint tied by aria-describedby, and an error slot tied the same way (filled by the page on a refusal).
'use strict';

import { h } from './dom.js?v=__VERSION__';

let ids = 0;
export const nextId = () => `fc-${++ids}`;
const describedBy = (...parts) => parts.filter(Boolean).join(' ') || undefined;

/** The slot a refusal of `name` is written to; tied to its control(s) by aria-describedby. */
export const errorSlot = (id, name) => h('span', { class: 'field-error', id, 'data-error-for': name });

/** A labelled text input (or textarea/select) with its unit, hint and error slot. */
export function control(name, label, value, { hint, unit, tag = 'input', options, ...attrs } = {}) {
  const id = nextId();
  const input = h(
    tag,
    {
      id,
      name,
      type: tag === 'input' ? 'text' : undefined,
      'aria-describedby': describedBy(unit && `${id}-unit`, hint && `${id}-hint`, `${id}-error`),
      ...attrs,
    },
    (options ?? []).map(([v, text]) => h('option', { value: v }, text)),
  );
  input.value = value ?? '';
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    h('span', { class: 'with-unit' }, input, unit ? h('span', { class: 'unit', id: `${id}-unit` }, unit) : null),
    hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null,
    errorSlot(`${id}-error`, name),
  );
}

export const number = (name, label, value, unit, hint) =>
  control(name, label, value, { unit, hint, inputmode: 'decimal', autocomplete: 'off', class: 'number' });

export function checkbox(name, label, checked, { hint, ...attrs } = {}) {
  const id = nextId();
  return h(
    'div',
    { class: 'check' },
    h('label', {}, h('input', { type: 'checkbox', name, checked, 'aria-describedby': describedBy(hint && `${id}-hint`, `${id}-error`), ...attrs }), label),
    hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null,
    errorSlot(`${id}-error`, name),
  );
}

/**
 * Radio buttons (or, with `multi`, checkboxes) in a fieldset: the legend names the group, its error slot describes it
 * and each of its boxes too, since a refusal focuses a box and screen readers read a box's description, not its
 * fieldset's.
 */
export function choices(name, legend, options, chosen, { multi = false } = {}) {
  const id = nextId();
  const picked = (v) => (multi ? chosen.includes(v) : chosen === v);
  const error = `${id}-error`;
  return h(
    'fieldset',
    { class: multi ? 'days' : 'choices', 'aria-describedby': error },
    h('legend', {}, legend),
    options.map(([v, text]) =>
      h(
        'label',
        {},
        h('input', { type: multi ? 'checkbox' : 'radio', name, value: v, checked: picked(v), 'data-multi': multi, 'aria-describedby': error }),
        text,
      ),
    ),
    errorSlot(error, name),
  );
}

/** Shows `part` only while `holds()`, judged again on every change in the form. */
export function shownWhile(form, part, holds) {
  const update = () => (part.hidden = !holds());
  form.addEventListener('change', update);
  queueMicrotask(update);
  return part;
}

/** The form's fields (named by API path) as a flat map: text as typed, checkboxes true/false, day boxes as lists. */
export function readFields(form) {
  const f = {};
  for (const el of form.elements) {
    if (!el.name || el.name === 'extras' || el.type === 'button' || el.type === 'submit') continue;
    if (el.dataset.multi !== undefined) (f[el.name] ??= []).push(...(el.checked ? [Number(el.value)] : []));
    else if (el.type === 'checkbox') f[el.name] = el.checked;
    else if (el.type !== 'radio') f[el.name] = el.value;
    else if (el.checked) f[el.name] = el.value;
  }
  return f;
}

export function clearErrors(form) {
  for (const slot of form.querySelectorAll('[data-error-for]')) slot.textContent = '';
  for (const el of form.querySelectorAll('[aria-invalid]')) el.removeAttribute('aria-invalid');
}
