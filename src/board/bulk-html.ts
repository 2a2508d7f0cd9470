// The HTML of the board's bulk actions (src/board/bulk.ts has the routes): the two buttons
// in each queue's header and the confirmation page's body. Kept apart from the routes so
// the queue page can render the buttons without importing the route module.

import { hiddenFilter, listHref, type ListFilter } from './find-html.js';
import { csrfField, html, type SafeHtml, joinHtml } from './html.js';

/** What each board button does: the action and the one state it takes. */
export const BULK = {
  retry: { state: 'failed', label: 'Retry all failed', done: 'retried', noun: 'failed' },
  cancel: { state: 'pending', label: 'Cancel all pending', done: 'canceled', noun: 'pending' },
} as const;
export type BoardBulk = keyof typeof BULK;

/** The two buttons in a queue's header (a GET form: the confirmation page comes next). */
export function bulkButtons(slug: string, queue: string): SafeHtml {
  return html`<form method="get" action="/bulk" class="inline bulk"><input type="hidden" name="endpoint" value="${slug}"><input type="hidden" name="queue" value="${queue}">
<button type="submit" name="action" value="retry">${BULK.retry.label}</button> <button type="submit" name="action" value="cancel">${BULK.cancel.label}</button></form>`;
}

/** A bulk action the board's buttons name: what, on which endpoint and queue. */
export interface Target {
  action: BoardBulk;
  endpoint: string;
  queue: string;
}

/** What "Retry all matches" / "Cancel all matches" on the todos list act on: the list's filter. */
export interface FilterTarget {
  action: BoardBulk;
  filter: ListFilter;
}

const MATCH_WORDS = { retry: 'retried', cancel: 'canceled' } as const;

/** The filter in words: each field and its value, escaped. */
export function describeFilter(f: ListFilter): SafeHtml {
  const parts = Object.entries(f).map(([k, v]) => html`${k} <code>${v}</code>`);
  return parts.length ? joinHtml(parts, ', ') : html`no filter`;
}

/** The confirmation of a bulk action over the todos list's matches. */
export function filterConfirmation(t: FilterTarget, matched: number, csrf: string): SafeHtml {
  const back = html`<a href="${listHref(t.filter)}">Back to the list</a>`;
  const what = t.action === 'cancel' ? 'pending or failed' : 'failed or canceled';
  const state = t.filter.state ?? what;
  if (matched === 0)
    return html`<p data-matched="0">No ${state} todos match (${describeFilter(t.filter)}): nothing to do.</p><p>${back}</p>`;
  return html`<p data-matched="${matched}">${matched} ${state} todo(s) matching ${describeFilter(t.filter)} will be ${MATCH_WORDS[t.action]}.</p>
<form method="post" action="/bulk">${csrfField(csrf)}${hiddenFilter(t.filter)}<input type="hidden" name="scope" value="filter"><input type="hidden" name="action" value="${t.action}">
<div class="actions"><button type="submit" class="${t.action === 'cancel' ? 'danger' : 'primary'}">${t.action === 'cancel' ? 'Cancel' : 'Retry'} ${matched} todo(s)</button> ${back}</div></form>`;
}

export function confirmation(t: Target, matched: number, csrf: string): SafeHtml {
  const where = html`<code>${t.endpoint}</code> · ${t.queue}`;
  if (matched === 0) {
    return html`<p>No ${BULK[t.action].noun} todos on ${where}: nothing to do.</p><p><a href="/">Back to the queues</a></p>`;
  }
  const hidden = joinHtml(
    (['action', 'endpoint', 'queue'] as const).map((k) => html`<input type="hidden" name="${k}" value="${t[k]}">`),
  );
  return html`<p data-matched="${matched}">${matched} ${BULK[t.action].noun} todo(s) on ${where} will be ${BULK[t.action].done}.</p>
<form method="post" action="/bulk">${csrfField(csrf)}${hidden}
<div class="actions"><button type="submit" class="${t.action === 'cancel' ? 'danger' : 'primary'}">${t.action === 'cancel' ? 'Cancel' : 'Retry'} ${matched} todo(s)</button> <a href="/">Back to the queues</a></div></form>`;
}
