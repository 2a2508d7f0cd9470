// The schedules page of an endpoint (docs/design/schedules.md, "The board"): its
// schedules with their next and last run, pause / resume / delete buttons, and the add
// form. Plain forms answered with a 303 back to the page, so it works without
// JavaScript; a mistake re-renders the page with the field named and the values typed so
// far. Another human's endpoint answers 404; every change is audited with the signed-in
// human (through src/schedules/manage.ts).

import type { FastifyInstance, FastifyReply } from 'fastify';
import { isAppError } from '../domain/errors.js';
import { wallClock } from '../domain/zones.js';
import { resolveEndpoint } from '../endpoints/manage.js';
import type { BoardSession } from '../identity/board-sessions.js';
import { createSchedule, deleteSchedule, listSchedules, patchSchedule, type ScheduleRow } from '../schedules/manage.js';
import { chromeOf, field, sendHtml, notFoundPage, signedIn, signedInForm, type Form } from './guard.js';
import { fieldError, formError, invalidAttrs } from './field-errors.js';
import { csrfField, html, isoTime, page, type SafeHtml, joinHtml } from './html.js';
import type { BoardDeps } from './guard.js';

type RefParams = { Params: { ref: string } };
type IdParams = { Params: { ref: string; id: string } };

const FIELDS = ['queue', 'cron', 'tz', 'title', 'body', 'payload', 'kind', 'priority'] as const;
type Values = Partial<Record<(typeof FIELDS)[number], string>>;

interface Target {
  id: string;
  slug: string;
  name: string;
  queues: string[];
}

async function target(deps: BoardDeps, session: BoardSession, ref: string): Promise<Target | null> {
  try {
    return await resolveEndpoint(deps.operator, session.principal.human.id, ref);
  } catch (err) {
    if (isAppError(err, 'not_found')) return null;
    throw err;
  }
}

function row(s: ScheduleRow, base: string, csrf: string): SafeHtml {
  const post = (path: string, label: string, cls = '', confirm = '') =>
    html`<form method="post" action="${base}/${s.id}/${path}" class="inline"${confirm ? html` hx-confirm="${confirm}"` : ''}>${csrfField(csrf)}<button type="submit"${cls ? html` class="${cls}"` : ''}>${label} <span class="sr">${s.title}</span></button></form>`;
  const next = s.next_run_at ? html`${wallClock(s.next_run_at, s.tz)}<br>${isoTime(s.next_run_at)}` : '—';
  const missed = s.last_missed > 0 ? html` <span class="chip warn">stood in for ${s.last_missed} missed</span>` : '';
  const last = s.last_run_at ? html`${isoTime(s.last_run_at)}${missed}` : 'never';
  const error = s.last_error ? html`<br><span class="error">${s.last_error}</span>` : '';
  const state = s.paused
    ? html`<span class="chip deferred">paused</span>`
    : html`<span class="chip open">active</span>`;
  return html`<tr data-schedule="${s.id}"><td>${s.title}</td><td><code>${s.queue}</code></td>
<td><code>${s.cron}</code> <span class="note">${s.tz}</span></td><td>${state}</td>
<td data-field="next_run">${next}</td><td data-field="last_run">${last}${error}</td>
<td>${s.paused ? post('resume', 'Resume') : post('pause', 'Pause')}${post('delete', 'Delete', 'danger', 'Delete this schedule?')}</td></tr>`;
}

function scheduleTable(schedules: ScheduleRow[], base: string, csrf: string): SafeHtml {
  if (schedules.length === 0) return html`<p class="note">No schedules yet.</p>`;
  const head = joinHtml(
    ['Title', 'Queue', 'When', 'State', 'Next run', 'Last run', 'Actions'].map((h) => html`<th scope="col">${h}</th>`),
  );
  return html`<table><caption class="note">Schedules</caption><thead><tr>${head}</tr></thead>
<tbody>${schedules.map((s) => row(s, base, csrf))}</tbody></table>`;
}

function addForm(endpoint: Target, base: string, csrf: string, v: Values, error?: string): SafeHtml {
  const input = (name: keyof Values, label: string, extra: SafeHtml = html``) =>
    html`<label for="s-${name}">${label}</label><input id="s-${name}" name="${name}" ${extra} value="${v[name] ?? ''}"${invalidAttrs(`s-${name}`, name, error)}>${fieldError(`s-${name}`, name, error)}`;
  const queues = joinHtml(
    endpoint.queues.map((q) => html`<option value="${q}"${q === v.queue ? ' selected' : ''}>${q}</option>`),
  );
  return html`<form method="post" action="${base}">${csrfField(csrf)}
<label for="s-queue">Queue</label><select id="s-queue" name="queue">${queues}</select>${fieldError('s-queue', 'queue', error)}
${input('cron', 'Cron (minute hour day-of-month month day-of-week, e.g. 0 9 * * 1-5)', html`required`)}
${input('tz', 'Zone (IANA, e.g. Europe/Berlin)', html`required`)}
${input('title', 'Title of each todo', html`required maxlength="200"`)}
<label for="s-body">Body</label><textarea id="s-body" name="body"${invalidAttrs('s-body', 'body', error)}>${v.body ?? ''}</textarea>${fieldError('s-body', 'body', error)}
${input('payload', 'Payload (JSON, optional)')}
${input('kind', 'Kind (optional)')}
${input('priority', 'Priority (−100 to 100, default 0)', html`inputmode="numeric"`)}
<div class="actions"><button type="submit" class="primary">Add schedule</button></div></form>`;
}

async function render(
  deps: BoardDeps,
  session: BoardSession,
  reply: FastifyReply,
  endpoint: Target,
  status = 200,
  typed?: { values: Values; error: string },
) {
  const base = `/endpoints/${endpoint.slug}/schedules`;
  const { schedules } = await listSchedules(deps.operator, session.principal.human.id, endpoint.id);
  const values = typed?.values ?? { queue: endpoint.queues[0] ?? '', tz: 'UTC' };
  const body = html`<p><a href="/endpoints/${endpoint.slug}">${endpoint.name}</a> · <a href="/">Queues</a></p>
${formError(typed?.error, FIELDS)}<section aria-labelledby="s-list"><h2 id="s-list">Current schedules</h2>${scheduleTable(schedules, base, session.csrf)}</section>
<section aria-labelledby="s-add"><h2 id="s-add">Add a schedule</h2>${addForm(endpoint, base, session.csrf, values, typed?.error)}</section>`;
  return sendHtml(reply, status, page(`Schedules of ${endpoint.name}`, body, chromeOf(session, 'endpoints')));
}

/** The form's fields → the API's schedule input; a payload or priority that does not parse names its field. */
function scheduleInput(v: Values): Record<string, unknown> | { error: string } {
  const input: Record<string, unknown> = { queue: v.queue, cron: v.cron, tz: v.tz?.trim(), title: v.title };
  if (v.body) input.body = v.body;
  if (v.kind?.trim()) input.kind = v.kind.trim();
  const payload = v.payload?.trim();
  if (payload) {
    try {
      input.payload = JSON.parse(payload) as unknown;
    } catch {
      return { error: 'payload: not valid JSON' };
    }
  }
  const priority = v.priority?.trim();
  if (priority) input.priority = /^-?\d+$/.test(priority) ? Number(priority) : priority;
  return input;
}

export function schedulePages(app: FastifyInstance, deps: BoardDeps): void {
  app.get<RefParams>('/endpoints/:ref/schedules', async (request, reply) => {
    const session = await signedIn(deps.identity, request, reply);
    if (!session) return reply;
    const endpoint = await target(deps, session, request.params.ref);
    if (!endpoint) return notFoundPage(reply, session, 'endpoint');
    return render(deps, session, reply, endpoint);
  });

  app.post<RefParams & { Body: Form }>('/endpoints/:ref/schedules', async (request, reply) => {
    const session = await signedInForm(deps.identity, request, reply);
    if (!session) return reply;
    const endpoint = await target(deps, session, request.params.ref);
    if (!endpoint) return notFoundPage(reply, session, 'endpoint');
    const values = Object.fromEntries(FIELDS.map((k) => [k, field(request.body, k)])) as Values;
    const input = scheduleInput(values);
    try {
      if ('error' in input)
        return await render(deps, session, reply, endpoint, 400, { values, error: input.error as string });
      await createSchedule(deps.operator, session.principal.human.id, endpoint.id, input, deps.now());
    } catch (err) {
      if (!isAppError(err, 'invalid_argument') && !isAppError(err, 'conflict')) throw err;
      return render(deps, session, reply, endpoint, 400, { values, error: err.message });
    }
    return reply.redirect(`/endpoints/${endpoint.slug}/schedules`, 303);
  });

  const actions: Array<[string, (ref: string, id: string, humanId: string) => Promise<unknown>]> = [
    ['pause', (ref, id, h) => patchSchedule(deps.operator, h, ref, id, { paused: true }, deps.now())],
    ['resume', (ref, id, h) => patchSchedule(deps.operator, h, ref, id, { paused: false }, deps.now())],
    ['delete', (ref, id, h) => deleteSchedule(deps.operator, h, ref, id)],
  ];
  for (const [name, act] of actions) {
    app.post<IdParams & { Body: Form }>(`/endpoints/:ref/schedules/:id/${name}`, async (request, reply) => {
      const session = await signedInForm(deps.identity, request, reply);
      if (!session) return reply;
      const endpoint = await target(deps, session, request.params.ref);
      if (!endpoint) return notFoundPage(reply, session, 'endpoint');
      try {
        await act(endpoint.id, request.params.id, session.principal.human.id);
      } catch (err) {
        if (isAppError(err, 'not_found')) return notFoundPage(reply, session, 'schedule');
        if (!isAppError(err, 'conflict')) throw err;
        return render(deps, session, reply, endpoint, 409, { values: {}, error: err.message });
      }
      return reply.redirect(`/endpoints/${endpoint.slug}/schedules`, 303);
    });
  }
}
