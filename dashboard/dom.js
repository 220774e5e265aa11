// The dashboard's building blocks: elements, the owner API, forms, the page frame.
// Text from the server is only ever set as text (textContent), never parsed as HTML.
'use strict';

import { outcomeText } from './trade-model.js?v=__VERSION__';

const main = document.getElementById('main');
export const session = { owner: null, csrf: null };

/** An element with attributes (on* handlers as listeners) and children (strings become text). */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) if (c !== null && c !== undefined) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error ?? `HTTP ${status}`);
    this.status = status;
    this.body = body;
  }
}

export async function api(method, path, body) {
  const headers = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && session.csrf) headers['x-csrf-token'] = session.csrf;
  const res = await fetch(path, { method, headers, credentials: 'same-origin', body: body === undefined ? undefined : JSON.stringify(body) });
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.status === 401 && !['/dashboard/setup', '/dashboard/sign-in'].includes(location.pathname)) location.assign('/dashboard/sign-in');
  if (!res.ok) throw new ApiError(res.status, data);
  return data;
}

export function errorText(err) {
  const details = err.body?.details?.map((d) => `${d.path ? `${d.path}: ` : ''}${d.message}`).join('; ');
  return [err.body?.message ?? err.message, details].filter(Boolean).join(' — ');
}

/** A form whose submit runs `action`; a refusal is shown in its alert region, and nothing is lost from the inputs. */
export function form(attrs, fields, submitLabel, action) {
  const alert = h('p', { role: 'alert' });
  const el = h('form', { ...attrs, novalidate: true }, fields, h('div', {}, h('button', { type: 'submit' }, submitLabel)), alert);
  el.addEventListener('submit', async (event) => {
    event.preventDefault();
    alert.textContent = '';
    try {
      await action(new FormData(el), el);
    } catch (err) {
      alert.textContent = err instanceof ApiError ? errorText(err) : String(err);
    }
  });
  return el;
}

let fields = 0;
/** A labelled input (or textarea); a hint is tied to it by aria-describedby, so the label stays the field's name. */
export function field(label, attrs, hint, children = []) {
  const id = `field-${++fields}`;
  return h(
    'div',
    { class: 'field' },
    h('label', { for: id }, label),
    hint ? h('span', { class: 'hint', id: `${id}-hint` }, hint) : null,
    h(attrs.tag ?? 'input', { ...attrs, tag: undefined, id, 'aria-describedby': hint ? `${id}-hint` : undefined }, children),
  );
}
export const when = (iso) => (iso ? new Date(iso).toLocaleString() : '—');
export const shownOnce = (label, value) => h('div', {}, h('p', {}, `${label} — shown once, copy it now:`), h('output', { class: 'once' }, value));

/** Nodes to insert: arrays flattened, absent parts (null, undefined) left out. */
export const present = (parts) => parts.flat(Infinity).filter((p) => p !== null && p !== undefined);

export function page(title, ...content) {
  document.title = `${title} · External Signals`;
  main.replaceChildren(h('h1', {}, title), ...present(content));
  main.focus();
}

/** One account's outcome of a signal; a pending entry's order reads "placed", never "filled" (trade-model.js). */
export function outcomeCell(action, a) {
  // A rejection in words, its code beside it ("rejected: the broker refused it: … (broker:10036)").
  if (a.outcome === 'rejected' && a.reasonText) return h('span', { class: 'rejected' }, `rejected: ${a.reasonText} `, h('code', {}, a.reason));
  const { text, kind } = outcomeText(action, a);
  return h('span', { class: kind }, text);
}

/** Runs `redraw` every `ms` while `slot` is on the page and the tab is shown (a hidden tab waits until it is shown). */
export function refreshWhileShown(slot, ms, redraw) {
  const again = () =>
    setTimeout(async () => {
      if (!slot.isConnected) return;
      if (document.visibilityState !== 'visible') {
        document.addEventListener('visibilitychange', again, { once: true });
        return;
      }
      try {
        await redraw();
      } catch {
        // The next round tries again; the slot keeps what it last showed.
      } finally {
        again();
      }
    }, ms);
  again();
}

/** A button that deletes one thing through the owner API, then shows the page again. */
export function deleteButton(label, accessibleName, path, reload) {
  return h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      'aria-label': accessibleName,
      onclick: async () => {
        await api('DELETE', path);
        await reload();
      },
    },
    label,
  );
}
