// HTML for the queues page: the lanes of every queue (the fragment the SSE stream pushes),
// the push form, and the todo detail shown as a drawer (htmx) or a full page (no JS).
// Slots marked data-slot="…" are where later parts land: the budget strip in each queue
// header (docs/design/admission.md), the deferred reason chip on a card, the rings of a
// todo (docs/design/doorbell-acknowledgement.md).

import type { EndpointLanes, LaneCard, QueueLanes } from '../endpoints/board.js';
import type { Todo, TodoAttempt } from '../domain/todo.js';
import { budgetKey } from '../budgets/board.js';
import type { QueueStatus } from '../admission/status.js';
import type { RingView } from '../doorbell/todo-rings.js';
import { budgetStrip, deferredChip } from './budget-html.js';
import { csrfField, escape, isoTime, roughDuration } from './html.js';

const LIVE_STATES = new Set(['pending', 'claimed', 'failed']);

function cardMeta(
  card: Pick<LaneCard, 'created_at' | 'attempt' | 'max_attempts' | 'lease_expires_at' | 'state'>,
  now: Date,
) {
  const parts = [
    `<span>age ${roughDuration(now.getTime() - card.created_at.getTime())}</span>`,
    `<span>attempt ${card.attempt}/${card.max_attempts}</span>`,
  ];
  if (card.state === 'claimed' && card.lease_expires_at) {
    const left = card.lease_expires_at.getTime() - now.getTime();
    parts.push(`<span>${left > 0 ? `lease ${roughDuration(left)} left` : 'lease lapsed'}</span>`);
  }
  return parts.join(' · ');
}

function card(c: LaneCard, now: Date, budget?: QueueStatus): string {
  const chip = c.state === 'canceled' ? ' <span class="chip canceled">canceled</span>' : '';
  return `<li class="card" data-todo="${escape(c.id)}" data-state="${c.state}">
<a id="card-${escape(c.id)}" href="/todos/${escape(c.id)}" hx-get="/todos/${escape(c.id)}" hx-target="#drawer" hx-push-url="false">${escape(c.title)}</a>${chip}
<div class="meta">${cardMeta(c, now)}</div>${deferredChip(budget, c.state)}</li>`;
}

export type Budgets = Map<string, QueueStatus>;

function queueSection(endpoint: { id: string; slug: string }, q: QueueLanes, now: Date, budgets: Budgets): string {
  const endpointId = endpoint.id;
  const budget = budgets.get(budgetKey(endpointId, q.queue));
  const href = `/endpoints/${escape(endpoint.slug)}/budgets/${escape(q.queue)}`;
  const lanes = q.lanes
    .map(
      (l) => `<section class="lane" data-lane="${l.lane}" aria-label="${escape(q.queue)} ${l.lane}">
<h4>${l.lane} <span class="count" data-count="${l.count}">${l.count}</span></h4>
<ol>${l.cards.map((c) => card(c, now, budget)).join('')}</ol>${l.count > l.cards.length ? `<p class="note">and ${l.count - l.cards.length} more</p>` : ''}</section>`,
    )
    .join('');
  return `<section class="queue" data-queue="${escape(q.queue)}" id="queue-${escape(endpointId)}-${escape(q.queue)}">
<div class="queue-head"><h3>${escape(q.queue)}</h3>${budgetStrip(budget, href)}</div>
<div class="lanes">${lanes}</div></section>`;
}

/** The live fragment: every endpoint's queues and lanes. */
export function lanesFragment(endpoints: EndpointLanes[], now: Date, budgets: Budgets = new Map()): string {
  const body =
    endpoints.length === 0
      ? '<p>No active endpoints yet. <a href="/endpoints/new">Vend one</a> to get a queue.</p>'
      : endpoints
          .map(
            ({ endpoint, queues }) => `<section class="endpoint" data-endpoint="${escape(endpoint.slug)}">
<h2>${escape(endpoint.name)} <code>${escape(endpoint.slug)}</code></h2>${queues.map((q) => queueSection(endpoint, q, now, budgets)).join('')}</section>`,
          )
          .join('');
  return `<div id="lanes">${body}</div>`;
}

export interface PushValues {
  target?: string;
  title?: string;
  body?: string;
  payload?: string;
  max_attempts?: string;
}

export function pushForm(endpoints: EndpointLanes[], csrf: string, values: PushValues = {}): string {
  if (endpoints.length === 0) return '';
  const options = endpoints
    .flatMap(({ endpoint, queues }) =>
      queues.map((q) => {
        const value = `${endpoint.slug}/${q.queue}`;
        return `<option value="${escape(value)}"${values.target === value ? ' selected' : ''}>${escape(endpoint.name)} · ${escape(q.queue)}</option>`;
      }),
    )
    .join('');
  return `<details class="push"${values.title !== undefined ? ' open' : ''}><summary>Push a todo</summary>
<form method="post" action="/todos">${csrfField(csrf)}
<label for="push-target">Queue</label><select id="push-target" name="target">${options}</select>
<label for="push-title">Title</label><input id="push-title" name="title" required maxlength="200" value="${escape(values.title ?? '')}">
<label for="push-body">Body</label><textarea id="push-body" name="body" rows="3">${escape(values.body ?? '')}</textarea>
<label for="push-payload">Payload (JSON, optional)</label><textarea id="push-payload" name="payload" rows="2">${escape(values.payload ?? '')}</textarea>
<label for="push-max">Max attempts (optional)</label><input id="push-max" name="max_attempts" type="number" min="1" max="100" value="${escape(values.max_attempts ?? '')}">
<div class="actions"><button type="submit" class="primary">Push</button></div></form></details>`;
}

const json = (value: unknown) =>
  value === null || value === undefined
    ? '<p class="note">none</p>'
    : `<pre>${escape(JSON.stringify(value, null, 2))}</pre>`;

function attemptsTable(attempts: TodoAttempt[]): string {
  if (attempts.length === 0) return '<p class="note">No attempts yet.</p>';
  const rows = attempts
    .map(
      (a) =>
        `<tr><td>${a.attempt}</td><td><code>${escape(a.session_id ?? '')}</code></td><td>${isoTime(a.claimed_at)}</td><td>${a.ended_at ? isoTime(a.ended_at) : 'open'}</td><td>${escape(a.outcome ?? '')}</td></tr>`,
    )
    .join('');
  return `<table><thead><tr><th scope="col">Attempt</th><th scope="col">Session</th><th scope="col">Claimed</th><th scope="col">Ended</th><th scope="col">Outcome</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function actions(todo: Todo, csrf: string, back: string): string {
  const form = (verb: string, label: string, cls: string) =>
    `<form method="post" action="/todos/${escape(todo.id)}/${verb}" class="inline">${csrfField(csrf)}<input type="hidden" name="back" value="${escape(back)}"><button type="submit" class="${cls}">${label}</button></form>`;
  const out: string[] = [];
  if (todo.state === 'failed' || todo.state === 'canceled') out.push(form('retry', 'Retry now', 'primary'));
  if (LIVE_STATES.has(todo.state)) out.push(form('cancel', 'Cancel', 'danger'));
  return out.length ? `<div class="actions">${out.join('')}</div>` : '';
}

const RING_STATES: Record<RingView['state'], string> = {
  open: 'delivered, no answer yet',
  heard: 'heard',
  heard_late: 'heard late',
  unheard: 'unheard',
};

function ringsSection(rings: RingView[] | undefined): string {
  if (!rings || rings.length === 0) {
    return '<section class="slot" data-slot="rings"><h3>Rings</h3><p class="note">No doorbell rings.</p></section>';
  }
  const rows = rings
    .map(
      (r) =>
        `<tr data-ring="${escape(r.id)}" data-ring-state="${r.state}"><td>${isoTime(r.sent_at)}</td><td><code>${escape(r.session_id)}</code></td><td>${RING_STATES[r.state]}</td><td>${r.ack_via ? `${escape(r.ack_via)}${r.acked_at ? ` at ${isoTime(r.acked_at)}` : ''}` : '—'}</td></tr>`,
    )
    .join('');
  return `<section class="slot" data-slot="rings"><h3>Rings</h3><table><thead><tr><th scope="col">Sent</th><th scope="col">Session</th><th scope="col">State</th><th scope="col">Ack via</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

type TodoView = { todo: Todo; attempts: TodoAttempt[]; rings?: RingView[] };

/** The todo's details and actions; `back` is where an action returns to. */
export function todoDetail(view: TodoView, csrf: string, back: string, now: Date): string {
  const { todo, attempts, rings } = view;
  const when = (d: Date | null) => (d ? isoTime(d) : '—');
  return `<dl>
<dt>Id</dt><dd><code>${escape(todo.id)}</code></dd><dt>Queue</dt><dd>${escape(todo.queue)}</dd>
<dt>State</dt><dd data-field="state">${todo.state}</dd><dt>Attempt</dt><dd>${todo.attempt}/${todo.max_attempts}</dd>
<dt>Age</dt><dd>${roughDuration(now.getTime() - todo.created_at.getTime())}</dd><dt>Created</dt><dd>${when(todo.created_at)}</dd>
<dt>Lease expires</dt><dd>${when(todo.lease_expires_at)}</dd><dt>Next retry</dt><dd>${when(todo.next_retry_at)}</dd>
<dt>Completed</dt><dd>${when(todo.completed_at)}</dd><dt>Kind</dt><dd>${escape(todo.kind ?? '—')}</dd>
<dt>Source</dt><dd>${escape(todo.source ?? '—')}</dd><dt>Error</dt><dd>${escape(todo.error ?? '—')}</dd></dl>
${actions(todo, csrf, back)}
<h3>Body</h3>${todo.body ? `<pre>${escape(todo.body)}</pre>` : '<p class="note">none</p>'}
<h3>Payload</h3>${json(todo.payload)}<h3>Result</h3>${json(todo.result)}
<h3>Attempts</h3>${attemptsTable(attempts)}
${ringsSection(rings)}`;
}

export function drawer(view: TodoView, csrf: string, now: Date): string {
  return `<section aria-labelledby="drawer-title"><button type="button" data-close-drawer>Close</button>
<h2 id="drawer-title" tabindex="-1">${escape(view.todo.title)}</h2>
<p><a href="/todos/${escape(view.todo.id)}">Open as a page</a></p>${todoDetail(view, csrf, '/', now)}</section>`;
}
