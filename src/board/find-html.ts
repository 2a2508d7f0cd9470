// HTML of the todos list (GET /todos, src/board/find.ts): the filter form (a plain GET, so
// every list is a bookmarkable URL), the rows, the next-page link, and the "Retry all
// matches" / "Cancel all matches" buttons, which carry the list's filter to the bulk
// confirmation page (src/board/bulk.ts). Also the search box of the queues page.

import { TODO_STATES } from '../domain/todo.js';
import type { FoundTodo } from '../endpoints/find-todos.js';
import type { Form } from './guard.js';
import { html, isoTime, type SafeHtml, joinHtml } from './html.js';

/** The list's filter fields, as query-string names (the bulk filter's, plus the endpoint). */
export const FILTER_KEYS = [
  'q',
  'endpoint',
  'queue',
  'state',
  'kind',
  'source',
  'priority',
  'priority_min',
  'created_after',
  'created_before',
] as const;
export type ListFilter = Partial<Record<(typeof FILTER_KEYS)[number], string>>;

const one = (form: Form | undefined, key: string) => {
  const value = form?.[key];
  return ((Array.isArray(value) ? value[0] : value) ?? '').trim();
};

/** The filter fields a query string or form names (empty ones left out). */
export function listFilterOf(form: Form | undefined): ListFilter {
  const out: ListFilter = {};
  for (const key of FILTER_KEYS) {
    const value = one(form, key);
    if (value) out[key] = value;
  }
  return out;
}

/** The filter as the use cases take it: numbers where the schema wants numbers; no endpoint. */
export function filterInput(f: ListFilter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(f)) {
    if (key === 'endpoint') continue;
    out[key] = (key === 'priority' || key === 'priority_min') && /^[+-]?\d+$/.test(value) ? Number(value) : value;
  }
  return out;
}

/** `/todos?…` for this filter (and a cursor). */
export function listHref(f: ListFilter, cursor?: string): string {
  const params = new URLSearchParams(Object.entries(f));
  if (cursor) params.set('cursor', cursor);
  const query = params.toString();
  return query ? `/todos?${query}` : '/todos';
}

export const hiddenFilter = (f: ListFilter) =>
  joinHtml(Object.entries(f).map(([k, v]) => html`<input type="hidden" name="${k}" value="${v}">`));

/** The search box on the queues page: a GET to the todos list. */
export function searchBox(): SafeHtml {
  return html`<form method="get" action="/todos" role="search" class="search"><label for="find-q">Search todos</label>
<input id="find-q" type="search" name="q" maxlength="200"> <button type="submit">Search</button> <a href="/todos">All todos</a></form>`;
}

function input(f: ListFilter, key: keyof ListFilter, label: string, extra: SafeHtml = html``) {
  return html`<label for="f-${key}">${label}</label><input id="f-${key}" name="${key}" value="${f[key] ?? ''}"${extra}>`;
}

function filterForm(f: ListFilter, endpoints: { slug: string; name: string }[]): SafeHtml {
  const opt = (value: string, label: string, current?: string) =>
    html`<option value="${value}"${current === value ? ' selected' : ''}>${label}</option>`;
  const endpointOptions = joinHtml(endpoints.map((e) => opt(e.slug, `${e.name} (${e.slug})`, f.endpoint)));
  const stateOptions = joinHtml(TODO_STATES.map((s) => opt(s, s, f.state)));
  return html`<form method="get" action="/todos" role="search" class="filters">
<label for="f-q">Title contains</label><input id="f-q" type="search" name="q" maxlength="200" value="${f.q ?? ''}">
<label for="f-endpoint">Endpoint</label><select id="f-endpoint" name="endpoint">${opt('', 'all')}${endpointOptions}</select>
${input(f, 'queue', 'Queue')}
<label for="f-state">State</label><select id="f-state" name="state">${opt('', 'any')}${stateOptions}</select>
${input(f, 'kind', 'Kind')}${input(f, 'source', 'Source')}
${input(f, 'priority', 'Priority (exactly)', html` type="number" min="-100" max="100"`)}${input(f, 'priority_min', 'Priority (at least)', html` type="number" min="-100" max="100"`)}
${input(f, 'created_after', 'Created after (RFC 3339)', html` placeholder="2026-12-01T00:00:00Z"`)}${input(f, 'created_before', 'Created before (RFC 3339)', html` placeholder="2026-12-02T00:00:00Z"`)}
<div class="actions"><button type="submit" class="primary">Filter</button> <a href="/todos">Clear</a></div></form>`;
}

function row(t: FoundTodo): SafeHtml {
  return html`<tr data-todo="${t.id}" data-state="${t.state}"><td><a href="/todos/${t.id}">${t.title}</a></td>
<td><code>${t.endpoint.slug}</code></td><td>${t.queue}</td><td>${t.state}</td><td>${t.priority}</td>
<td>${t.kind ?? ''}</td><td>${t.source ?? ''}</td><td>${isoTime(t.created_at)}</td></tr>`;
}

/** "Retry all matches" / "Cancel all matches": a GET to the confirmation page with the filter. */
function bulkForm(f: ListFilter): SafeHtml {
  return html`<form method="get" action="/bulk" class="inline bulk">${hiddenFilter(f)}<input type="hidden" name="scope" value="filter">
<button type="submit" name="action" value="retry">Retry all matches</button> <button type="submit" name="action" value="cancel">Cancel all matches</button></form>`;
}

export interface ListView {
  filter: ListFilter;
  todos: FoundTodo[];
  nextCursor: string | null;
  endpoints: { slug: string; name: string }[];
  error?: string;
}

export function todosList(v: ListView): SafeHtml {
  const table =
    v.todos.length === 0
      ? html`<p class="note" data-empty>No todos match.</p>`
      : html`<table class="found"><thead><tr><th scope="col">Title</th><th scope="col">Endpoint</th><th scope="col">Queue</th><th scope="col">State</th><th scope="col">Priority</th><th scope="col">Kind</th><th scope="col">Source</th><th scope="col">Created</th></tr></thead>
<tbody>${v.todos.map(row)}</tbody></table>`;
  const next = v.nextCursor ? html`<p><a rel="next" href="${listHref(v.filter, v.nextCursor)}">Next page</a></p>` : '';
  return html`${filterForm(v.filter, v.endpoints)}${v.todos.length ? bulkForm(v.filter) : ''}${table}${next}`;
}
