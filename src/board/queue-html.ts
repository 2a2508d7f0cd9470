// HTML for the queues page: the lanes of every queue (the fragment the SSE stream pushes),
// the push form, and the todo detail shown as a drawer (htmx) or a full page (no JS).
// Slots marked data-slot="…" are where later parts land: the budget strip in each queue
// header (docs/design/admission.md), the deferred reason chip on a card, the rings of a
// todo (docs/design/doorbell-acknowledgement.md), its route (docs/design/routing.md), its
// timeline (timeline-html.ts).

import type { EndpointLanes, LaneCard, QueueLanes } from '../endpoints/board.js';
import type { Todo, TodoAttempt } from '../domain/todo.js';
import { describeWaiting, type Waiting } from '../domain/waiting.js';
import { budgetKey } from '../budgets/board.js';
import type { QueueStatus } from '../admission/status.js';
import type { RingView } from '../doorbell/todo-rings.js';
import type { TodoLinks } from '../todos/read.js';
import type { Timeline } from '../todos/timeline.js';
import { budgetStrip, deferredChip } from './budget-html.js';
import { linksSection } from './links-html.js';
import { timelineSection } from './timeline-html.js';
import { bulkButtons } from './bulk-html.js';
import { chartStrip } from './queue-charts.js';
import { routeSection, type RouteEvent } from './route-html.js';
import type { TodoRoute } from '../todos/read.js';
import { csrfField, html, htmlText, isoTime, joinHtml, raw, roughDuration, stateChip, type SafeHtml } from './html.js';

const LIVE_STATES = new Set(['pending', 'claimed', 'failed', 'waiting_on_human']);

function cardMeta(
  card: Pick<LaneCard, 'created_at' | 'attempt' | 'max_attempts' | 'lease_expires_at' | 'state' | 'priority'>,
  now: Date,
) {
  const parts = [
    html`<span>age ${roughDuration(now.getTime() - card.created_at.getTime())}</span>`,
    html`<span>attempt ${card.attempt}/${card.max_attempts}</span>`,
  ];
  if (card.priority !== 0) parts.push(html`<span data-field="priority">priority ${card.priority}</span>`);
  if (card.state === 'claimed' && card.lease_expires_at) {
    const left = card.lease_expires_at.getTime() - now.getTime();
    parts.push(html`<span>${left > 0 ? `lease ${roughDuration(left)} left` : 'lease lapsed'}</span>`);
  }
  return joinHtml(parts, ' · ');
}

function card(c: LaneCard, now: Date, budget?: QueueStatus): SafeHtml {
  const dead = c.state === 'failed' && c.next_retry_at === null;
  const chip = c.state === 'canceled' ? html` ${stateChip('canceled')}` : dead ? html` ${stateChip('dead')}` : '';
  return html`<li class="card" data-todo="${c.id}" data-state="${c.state}">
<a id="card-${c.id}" href="/todos/${c.id}" hx-get="/todos/${c.id}" hx-target="#drawer" hx-push-url="false">${c.title}</a>${chip}
<div class="meta">${cardMeta(c, now)}</div>${deferredChip(budget, c.state)}</li>`;
}

export type Budgets = Map<string, QueueStatus>;

function queueSection(endpoint: { id: string; slug: string }, q: QueueLanes, now: Date, budgets: Budgets): SafeHtml {
  const endpointId = endpoint.id;
  const budget = budgets.get(budgetKey(endpointId, q.queue));
  const href = `/endpoints/${endpoint.slug}/budgets/${q.queue}`;
  const lanes = joinHtml(
    q.lanes.map(
      (l) => html`<section class="lane" data-lane="${l.lane}" aria-label="${q.queue} ${l.lane}">
<h4>${l.lane} <span class="count" data-count="${l.count}">${l.count}</span></h4>
<ol>${l.cards.map((c) => card(c, now, budget))}</ol>${l.count > l.cards.length ? html`<p class="note">and ${l.count - l.cards.length} more</p>` : ''}</section>`,
    ),
  );
  return html`<section class="queue" data-queue="${q.queue}" id="queue-${endpointId}-${q.queue}">
<div class="queue-head"><h3>${q.queue}</h3>${budgetStrip(budget, href)}${bulkButtons(endpoint.slug, q.queue)}</div>${chartStrip(endpoint.slug, q.queue, q.chart, now)}
<div class="lanes">${lanes}</div></section>`;
}

/** The live fragment: every endpoint's queues and lanes. */
export function lanesFragment(endpoints: EndpointLanes[], now: Date, budgets: Budgets = new Map()): SafeHtml {
  const body =
    endpoints.length === 0
      ? html`<p>No active endpoints yet. <a href="/endpoints/new">Vend one</a> to get a queue.</p>`
      : joinHtml(
          endpoints.map(
            ({ endpoint, queues }) => html`<section class="endpoint" data-endpoint="${endpoint.slug}">
<h2>${endpoint.name} <code>${endpoint.slug}</code></h2>${queues.map((q) => queueSection(endpoint, q, now, budgets))}</section>`,
          ),
        );
  return html`<div id="lanes">${body}</div>`;
}

export interface PushValues {
  target?: string;
  title?: string;
  body?: string;
  payload?: string;
  max_attempts?: string;
  priority?: string;
  not_before?: string;
}

export function pushForm(endpoints: EndpointLanes[], csrf: string, values: PushValues = {}): SafeHtml {
  if (endpoints.length === 0) return html``;
  const options = joinHtml(
    endpoints.flatMap(({ endpoint, queues }) =>
      queues.map((q) => {
        const value = `${endpoint.slug}/${q.queue}`;
        return html`<option value="${value}"${values.target === value ? ' selected' : ''}>${endpoint.name} · ${q.queue}</option>`;
      }),
    ),
  );
  return html`<details class="push"${values.title !== undefined ? ' open' : ''}><summary>Push a todo</summary>
<form method="post" action="/todos">${csrfField(csrf)}
<label for="push-target">Queue</label><select id="push-target" name="target">${options}</select>
<label for="push-title">Title</label><input id="push-title" name="title" required maxlength="200" value="${values.title ?? ''}">
<label for="push-body">Body</label><textarea id="push-body" name="body" rows="3">${values.body ?? ''}</textarea>
<label for="push-payload">Payload (JSON, optional)</label><textarea id="push-payload" name="payload" rows="2">${values.payload ?? ''}</textarea>
<label for="push-max">Max attempts (optional)</label><input id="push-max" name="max_attempts" type="number" min="1" max="100" value="${values.max_attempts ?? ''}">
<label for="push-priority">Priority (−100 to 100, higher first; optional)</label><input id="push-priority" name="priority" type="number" min="-100" max="100" value="${values.priority ?? ''}">
<label for="push-not-before">Not before (RFC 3339 with a zone, e.g. 2026-12-24T09:00:00+01:00; optional)</label><input id="push-not-before" name="not_before" placeholder="2026-12-24T09:00:00Z" value="${values.not_before ?? ''}">
<div class="actions"><button type="submit" class="primary">Push</button></div></form></details>`;
}

const json = (value: unknown) =>
  value === null || value === undefined
    ? html`<p class="note">none</p>`
    : html`<pre>${JSON.stringify(value, null, 2)}</pre>`;

/** A session id, linked to its page while the session is live (`live` holds those ids). */
function sessionRef(id: string | null, live: ReadonlySet<string>): SafeHtml {
  if (!id) return html`—`;
  const code = html`<code>${id}</code>`;
  return live.has(id) ? html`<a href="/sessions/${id}" data-session-link>${code}</a>` : code;
}

/** The attempts timeline: who claimed it, when, its lease, when and how it ended. */
function attemptsTable(attempts: TodoAttempt[], live: ReadonlySet<string>): SafeHtml {
  if (attempts.length === 0) return html`<p class="note">No attempts yet.</p>`;
  const rows = joinHtml(
    attempts.map(
      (a) =>
        html`<tr data-attempt="${a.attempt}"><td>${a.attempt}</td><td>${sessionRef(a.session_id, live)}</td><td>${isoTime(a.claimed_at)}</td><td>${a.lease_expires_at ? isoTime(a.lease_expires_at) : '—'}</td><td>${a.ended_at ? isoTime(a.ended_at) : 'open'}</td><td>${a.outcome ?? ''}</td><td>${attemptNote(a)}</td></tr>`,
    ),
  );
  return html`<table data-slot="attempts"><thead><tr><th scope="col">Attempt</th><th scope="col">Session</th><th scope="col">Claimed</th><th scope="col">Lease expires</th><th scope="col">Ended</th><th scope="col">Outcome</th><th scope="col">Left</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** What the agent left on the attempt: its summary (marked when cut) and artifact reference. */
function attemptNote(a: TodoAttempt): SafeHtml {
  const parts = [
    a.summary === null ? null : html`<span data-summary>${a.summary}${a.summary_truncated ? ' …(cut)' : ''}</span>`,
    a.artifact === null ? null : html`<code data-artifact>${a.artifact}</code>`,
  ].filter((p) => p !== null);
  return parts.length === 0 ? html`—` : joinHtml(parts, html`<br>`);
}

/** Who made the todo: a schedule, a webhook, an endpoint's agent, or a person. */
function creatorOf(todo: Todo): SafeHtml {
  if (todo.schedule_id) return html`schedule <code>${todo.schedule_id}</code>`;
  if (todo.source === 'webhook') return html`webhook`;
  if (todo.created_by_endpoint_id) return html`endpoint <code>${todo.created_by_endpoint_id}</code>`;
  if (todo.created_by_human_id) return html`human <code>${todo.created_by_human_id}</code>`;
  return html`unknown`;
}

function actions(todo: Todo, csrf: string, back: string): SafeHtml {
  const form = (verb: string, label: string, cls: string) =>
    html`<form method="post" action="/todos/${todo.id}/${verb}" class="inline">${csrfField(csrf)}<input type="hidden" name="back" value="${back}"><button type="submit" class="${cls}">${label}</button></form>`;
  const out: SafeHtml[] = [];
  if (todo.state === 'failed' || todo.state === 'canceled') out.push(form('retry', 'Retry now', 'primary'));
  if (LIVE_STATES.has(todo.state)) out.push(form('cancel', 'Cancel', 'danger'));
  return out.length ? html`<div class="actions">${out}</div>` : html``;
}

const RING_STATES: Record<RingView['state'], string> = {
  open: 'delivered, no answer yet',
  heard: 'heard',
  heard_late: 'heard late',
  unheard: 'unheard',
};

function ringsSection(rings: RingView[] | undefined): SafeHtml {
  if (!rings || rings.length === 0) {
    return html`<section class="slot" data-slot="rings"><h3>Rings</h3><p class="note">No doorbell rings.</p></section>`;
  }
  const rows = joinHtml(
    rings.map(
      (r) =>
        html`<tr data-ring="${r.id}" data-ring-state="${r.state}"><td>${isoTime(r.sent_at)}</td><td><code>${r.session_id}</code></td><td>${RING_STATES[r.state]}</td><td>${r.ack_via ? html`${r.ack_via}${r.acked_at ? html` at ${isoTime(r.acked_at)}` : ''}` : '—'}</td></tr>`,
    ),
  );
  return html`<section class="slot" data-slot="rings"><h3>Rings</h3><table><thead><tr><th scope="col">Sent</th><th scope="col">Session</th><th scope="col">State</th><th scope="col">Ack via</th></tr></thead><tbody>${rows}</tbody></table></section>`;
}

type TodoView = {
  todo: Todo & { waiting?: Waiting };
  attempts: TodoAttempt[];
  rings?: RingView[];
  /** Lineage (docs/design/handoff.md): shown when the todo was handed from or to another. */
  links?: TodoLinks;
  /** The human's live sessions: the ones a link can open. */
  liveSessions?: ReadonlySet<string>;
  /** What happened to it, oldest first (src/todos/timeline.ts), and the human's endpoint slugs to link. */
  timeline?: Timeline;
  endpointSlugs?: ReadonlySet<string>;
  /** How a webhook event's rules made it, and that event (null when gone). */
  route?: TodoRoute;
  event?: RouteEvent | null;
};

/**
 * Why the todo waits (docs/design/todos.md, "Why is it waiting"); nothing when it does not.
 * The words are fixed phrases, numbers and reasons from closed sets, so only the times
 * become markup (<time>); no text of the todo's is in them.
 */
function waitingRow(waiting: Waiting | undefined): SafeHtml {
  if (!waiting) return html``;
  // The one reason that carries an agent's text (docs/design/ask-human.md): escaped here, never raw.
  if (waiting.reason === 'waiting_on_human') return humanRow(waiting);
  // Fixed phrases, numbers, closed-set reasons and <time> markup from isoTime (see above).
  const words = raw(describeWaiting(waiting, (iso) => htmlText(isoTime(new Date(iso)))));
  return html`<dt>Waiting</dt><dd data-field="waiting" data-waiting="${waiting.reason}">${words}</dd>`;
}

function humanRow(w: Extract<Waiting, { reason: 'waiting_on_human' }>): SafeHtml {
  const choices = w.choices
    ? html` (choices: ${joinHtml(
        w.choices.map((c, i) => html`${i}) ${c}`),
        ', ',
      )})`
    : '';
  return html`<dt>Waiting</dt><dd data-field="waiting" data-waiting="waiting_on_human">on a human since ${isoTime(new Date(w.since))}: <q>${w.question}</q>${choices} <a href="/needs-you">Answer it</a></dd>`;
}

/** A failed todo with no retry ahead is dead-lettered: only a human's retry revives it. */
const deadChip = (todo: Todo) =>
  todo.state === 'failed' && todo.next_retry_at === null ? html` ${stateChip('dead', 'dead-lettered')}` : '';

/** The todo's details and actions; `back` is where an action returns to. */
export function todoDetail(view: TodoView, csrf: string, back: string, now: Date): SafeHtml {
  const { todo, attempts, rings } = view;
  const live = view.liveSessions ?? new Set<string>();
  const when = (d: Date | null) => (d ? isoTime(d) : '—');
  return html`<dl>
<dt>Id</dt><dd><code>${todo.id}</code></dd><dt>Queue</dt><dd>${todo.queue}</dd>
<dt>State</dt><dd data-field="state">${stateChip(todo.state)}${deadChip(todo)}</dd>${waitingRow(todo.waiting)}<dt>Attempt</dt><dd>${todo.attempt}/${todo.max_attempts}</dd>
<dt>Priority</dt><dd data-field="priority">${todo.priority}</dd><dt>Not before</dt><dd>${when(todo.not_before)}</dd>
<dt>Age</dt><dd>${roughDuration(now.getTime() - todo.created_at.getTime())}</dd><dt>Created</dt><dd>${when(todo.created_at)}</dd>
<dt>Lease expires</dt><dd>${when(todo.lease_expires_at)}</dd><dt>Next retry</dt><dd>${when(todo.next_retry_at)}</dd>
<dt>Completed</dt><dd>${when(todo.completed_at)}</dd><dt>Kind</dt><dd>${todo.kind ?? '—'}</dd>
<dt>Source</dt><dd>${todo.source ?? '—'}</dd><dt>Created by</dt><dd data-field="creator">${creatorOf(todo)}</dd>
<dt>Owning session</dt><dd data-field="owner">${sessionRef(todo.owner_session_id, live)}</dd><dt>Error</dt><dd>${todo.error ?? '—'}</dd></dl>
${actions(todo, csrf, back)}
<h3>Body</h3>${todo.body ? html`<pre>${todo.body}</pre>` : html`<p class="note">none</p>`}
<h3>Payload</h3>${json(todo.payload)}<h3>Result</h3>${json(todo.result)}
${timelineSection(view.timeline, { liveSessions: live, endpoints: view.endpointSlugs ?? new Set<string>() })}
<h3>Attempts</h3>${attemptsTable(attempts, live)}
${linksSection(view.links)}${ringsSection(rings)}${routeSection(view.route, view.event ?? null)}`;
}

export function drawer(view: TodoView, csrf: string, now: Date): SafeHtml {
  return html`<section aria-labelledby="drawer-title"><button type="button" data-close-drawer>Close</button>
<h2 id="drawer-title" tabindex="-1">${view.todo.title}</h2>
<p><a href="/todos/${view.todo.id}">Open as a page</a></p>${todoDetail(view, csrf, '/', now)}</section>`;
}
