// HTML of the todos list (GET /todos, src/board/find.ts): the filter form (a plain GET, so
// every list is a bookmarkable URL), the rows, the next-page link, and the "Retry all
// matches" / "Cancel all matches" buttons, which carry the list's filter to the bulk
// confirmation page (src/board/bulk.ts). Also the search box of the queues page.

import { TODO_STATES } from '../domain/todo.js';
import type { FoundTodo } from '../endpoints/find-todos.js';
import type { Form } from './guard.js';
import { escape, isoTime } from './html.js';

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
  Object.entries(f)
    .map(([k, v]) => `<input type="hidden" name="${escape(k)}" value="${escape(v)}">`)
    .join('');

/** The search box on the queues page: a GET to the todos list. */
export function searchBox(): string {
  return `<form method="get" action="/todos" role="search" class="search"><label for="find-q">Search todos</label>
<input id="find-q" type="search" name="q" maxlength="200"> <button type="submit">Search</button> <a href="/todos">All todos</a></form>`;
}

function input(f: ListFilter, key: keyof ListFilter, label: string, extra = '') {
  return `<label for="f-${key}">${label}</label><input id="f-${key}" name="${key}" value="${escape(f[key] ?? '')}"${extra}>`;
}

function filterForm(f: ListFilter, endpoints: { slug: string; name: string }[]): string {
  const opt = (value: string, label: string, current?: string) =>
    `<option value="${escape(value)}"${current === value ? ' selected' : ''}>${escape(label)}</option>`;
  const endpointOptions = endpoints.map((e) => opt(e.slug, `${e.name} (${e.slug})`, f.endpoint)).join('');
  const stateOptions = TODO_STATES.map((s) => opt(s, s, f.state)).join('');
  return `<form method="get" action="/todos" role="search" class="filters">
<label for="f-q">Title contains</label><input id="f-q" type="search" name="q" maxlength="200" value="${escape(f.q ?? '')}">
<label for="f-endpoint">Endpoint</label><select id="f-endpoint" name="endpoint">${opt('', 'all')}${endpointOptions}</select>
${input(f, 'queue', 'Queue')}
<label for="f-state">State</label><select id="f-state" name="state">${opt('', 'any')}${stateOptions}</select>
${input(f, 'kind', 'Kind')}${input(f, 'source', 'Source')}
${input(f, 'priority', 'Priority (exactly)', ' type="number" min="-100" max="100"')}${input(f, 'priority_min', 'Priority (at least)', ' type="number" min="-100" max="100"')}
${input(f, 'created_after', 'Created after (RFC 3339)', ' placeholder="2026-12-01T00:00:00Z"')}${input(f, 'created_before', 'Created before (RFC 3339)', ' placeholder="2026-12-02T00:00:00Z"')}
<div class="actions"><button type="submit" class="primary">Filter</button> <a href="/todos">Clear</a></div></form>`;
}

function row(t: FoundTodo): string {
  return `<tr data-todo="${escape(t.id)}" data-state="${t.state}"><td><a href="/todos/${escape(t.id)}">${escape(t.title)}</a></td>
<td><code>${escape(t.endpoint.slug)}</code></td><td>${escape(t.queue)}</td><td>${t.state}</td><td>${t.priority}</td>
<td>${escape(t.kind ?? '')}</td><td>${escape(t.source ?? '')}</td><td>${isoTime(t.created_at)}</td></tr>`;
}

/** "Retry all matches" / "Cancel all matches": a GET to the confirmation page with the filter. */
function bulkForm(f: ListFilter): string {
  return `<form method="get" action="/bulk" class="inline bulk">${hiddenFilter(f)}<input type="hidden" name="scope" value="filter">
<button type="submit" name="action" value="retry">Retry all matches</button> <button type="submit" name="action" value="cancel">Cancel all matches</button></form>`;
}

export interface ListView {
  filter: ListFilter;
  todos: FoundTodo[];
  nextCursor: string | null;
  endpoints: { slug: string; name: string }[];
  error?: string;
}

export function todosList(v: ListView): string {
  const table =
    v.todos.length === 0
      ? '<p class="note" data-empty>No todos match.</p>'
      : `<table class="found"><thead><tr><th scope="col">Title</th><th scope="col">Endpoint</th><th scope="col">Queue</th><th scope="col">State</th><th scope="col">Priority</th><th scope="col">Kind</th><th scope="col">Source</th><th scope="col">Created</th></tr></thead>
<tbody>${v.todos.map(row).join('')}</tbody></table>`;
  const next = v.nextCursor
    ? `<p><a rel="next" href="${escape(listHref(v.filter, v.nextCursor))}">Next page</a></p>`
    : '';
  return `${filterForm(v.filter, v.endpoints)}${v.todos.length ? bulkForm(v.filter) : ''}${table}${next}`;
}
