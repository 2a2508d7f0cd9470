// HTML for the board's quarantine (docs/design/routing.md, "Trusted actors and
// quarantine") and a webhook's rules page (its rules, the JSON editor and the dry run).
// Everything a provider or an actor sent — actor, reason, titles, payload — is data and
// goes through the `html` tag like any other text.

import type { testRules } from '../routing/manage.js';
import type { listQuarantine, showQuarantine } from '../routing/quarantine.js';
import { QUARANTINE_STATES } from '../domain/routing.js';
import { fieldOf } from './field-errors.js';
import { csrfField, errorLine, html, isoTime, joinHtml, type SafeHtml } from './html.js';

type Item = Awaited<ReturnType<typeof listQuarantine>>['items'][number];
type Shown = Awaited<ReturnType<typeof showQuarantine>>['item'];
type DryRun = Awaited<ReturnType<typeof testRules>>['results'];

const dash = html`<span class="note">—</span>`;
const text = (v: string | null | undefined) => (v === null || v === undefined || v === '' ? dash : v);

interface Planned {
  endpoint: string | null;
  queue: string;
  title: string;
}

/** The todos an item would make, read defensively (the plan is stored as JSON). */
function plannedOf(plan: unknown): Planned[] {
  if (!Array.isArray(plan)) return [];
  return plan.flatMap((p: unknown) => {
    if (typeof p !== 'object' || p === null) return [];
    const o = p as Record<string, unknown>;
    return [
      {
        endpoint: typeof o.endpoint === 'string' ? o.endpoint : null,
        queue: typeof o.queue === 'string' ? o.queue : '',
        title: typeof o.title === 'string' ? o.title : '',
      },
    ];
  });
}

/** One would-be todo: "title (endpoint · queue)". */
const planned = (p: Planned) =>
  html`<li>${p.title} <span class="note">(${p.endpoint ?? 'this endpoint'} · <code>${p.queue}</code>)</span></li>`;

function wouldMake(plan: unknown): SafeHtml {
  const list = plannedOf(plan);
  return list.length ? html`<ul class="plain">${list.map(planned)}</ul>` : dash;
}

const stateChip = (state: string) =>
  html`<span class="chip${state === 'held' ? ' warn' : ''}" data-qstate="${state}">${state}</span>`;

export function stateLinks(current: string): SafeHtml {
  return html`<nav aria-label="Quarantine states"><p>${joinHtml(
    QUARANTINE_STATES.map((s) =>
      s === current
        ? html`<a href="/quarantine?state=${s}" aria-current="page">${s}</a>`
        : html`<a href="/quarantine?state=${s}">${s}</a>`,
    ),
    ' · ',
  )}</p></nav>`;
}

export function quarantineTable(items: Item[], state: string): SafeHtml {
  if (items.length === 0) return html`<p class="note">Nothing ${state}.</p>`;
  const head = joinHtml(
    ['Received', 'Item', 'Actor', 'Reason', 'Would make', 'State'].map((h) => html`<th scope="col">${h}</th>`),
  );
  const rows = items.map(
    (q) => html`<tr data-quarantine="${q.id}"><td>${isoTime(q.created_at)}</td>
<td><a href="/quarantine/${q.id}"><code>${q.id}</code></a></td><td>${text(q.actor)}</td><td>${text(q.reason)}</td>
<td>${wouldMake(q.would_make)}</td><td>${stateChip(q.state)}</td></tr>`,
  );
  return html`<table><caption class="note">Quarantine items (${state}), newest first</caption><thead><tr>${head}</tr></thead>
<tbody>${rows}</tbody></table>`;
}

const todoLinks = (ids: string[]) =>
  ids.length
    ? joinHtml(
        ids.map((id) => html`<a href="/todos/${id}"><code>${id}</code></a>`),
        ' ',
      )
    : dash;

/** The notice after a release or a discard (the list's `?done=` and `?item=`). */
export function resolvedNotice(done: 'released' | 'discarded', item: { id: string; todo_ids: string[] } | null) {
  if (!item) return html``;
  const made =
    done === 'released'
      ? item.todo_ids.length
        ? html` It made ${todoLinks(item.todo_ids)}.`
        : html` It made no todo (the rules as they are now made nothing of it).`
      : html` Nothing was made.`;
  return html`<p class="notice" role="status" data-done="${done}">${done === 'released' ? 'Released' : 'Discarded'} <code>${item.id}</code>.${made}</p>`;
}

const pretty = (value: unknown) =>
  value === null || value === undefined ? dash : html`<pre>${JSON.stringify(value, null, 2)}</pre>`;

export function itemDetail(q: Shown, csrf: string, discard: { reason: string; error?: string }): SafeHtml {
  const e = q.event;
  const reasonError =
    discard.error && fieldOf(discard.error) === 'reason'
      ? html`<p class="error" role="alert" id="q-reason-error" data-error-for="reason">${discard.error}</p>`
      : discard.error
        ? errorLine(discard.error)
        : html``;
  const invalid = discard.error ? html` aria-invalid="true" aria-describedby="q-reason-error"` : html``;
  const forms =
    q.state === 'held'
      ? html`<section aria-labelledby="q-decide"><h2 id="q-decide">Decide</h2>
<p class="note">Release routes this event as if its actor were trusted, under the webhook's rules as they are now: its todos are made and ring their endpoints. Discard makes nothing and keeps your reason.</p>
<form method="post" action="/quarantine/${q.id}/release" class="inline">${csrfField(csrf)}<button type="submit" class="primary">Release <span class="sr">${q.id}</span></button></form>
<form method="post" action="/quarantine/${q.id}/discard">${csrfField(csrf)}
<label for="q-reason">Reason for discarding</label><input id="q-reason" name="reason" required maxlength="500" value="${discard.reason}"${invalid}>${reasonError}
<div class="actions"><button type="submit" class="danger">Discard <span class="sr">${q.id}</span></button></div></form></section>`
      : html`<p class="notice" role="status">This item is ${q.state}${q.resolved_by ? html` by <code>${q.resolved_by}</code>` : ''}${q.resolved_at ? html` at ${isoTime(q.resolved_at)}` : ''}.</p>`;
  return html`<p><a href="/quarantine">Back to the quarantine</a></p>
<dl data-quarantine="${q.id}"><dt>Item</dt><dd><code>${q.id}</code></dd><dt>State</dt><dd>${stateChip(q.state)}</dd>
<dt>Received</dt><dd>${isoTime(q.created_at)}</dd><dt>Actor</dt><dd>${text(q.actor)}</dd><dt>Reason</dt><dd>${text(q.reason)}</dd>
<dt>Rule</dt><dd>${q.rule_id ? html`<code>${q.rule_id}</code>` : dash}</dd><dt>Would make</dt><dd>${wouldMake(q.would_make)}</dd>
<dt>Event</dt><dd>${e ? html`<code>${e.id}</code> · ${e.provider} · ${text(e.type)}` : dash}</dd>
<dt>Resolution</dt><dd>${text(q.resolution)}</dd><dt>Todos</dt><dd>${todoLinks(q.todo_ids)}</dd></dl>
${forms}
<section aria-labelledby="q-payload"><h2 id="q-payload">Payload</h2><p class="note">What would reach the agent if released.</p>${pretty(e?.payload)}</section>`;
}

/** The rules as saved, one row each. */
export function rulesTable(
  rules: Array<{ id: string; name?: string | undefined; when: string; then: unknown }>,
  def: string,
): SafeHtml {
  const footer = html`<p class="note">When no rule matches: <code>${def}</code>.</p>`;
  if (rules.length === 0)
    return html`<p class="note">No rules: every delivery routes to the webhook's queue.</p>${footer}`;
  const head = joinHtml(['#', 'Id', 'Name', 'When', 'Then'].map((h) => html`<th scope="col">${h}</th>`));
  const rows = rules.map(
    (r, i) =>
      html`<tr data-rule="${r.id}"><td>${i}</td><td><code>${r.id}</code></td><td>${text(r.name)}</td><td><code>${r.when}</code></td><td><code>${JSON.stringify(r.then)}</code></td></tr>`,
  );
  return html`<table><caption class="note">Saved rules, in the order they run</caption><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>${footer}`;
}

export interface RulesForm {
  rules: string;
  payload: string;
  type: string;
  /** A Save refusal: the server's message (field and position). */
  saveError?: string;
  /** A dry run refusal. */
  testError?: string;
  saved?: boolean;
}

export function rulesEditor(base: string, csrf: string, f: RulesForm): SafeHtml {
  const err = f.saveError;
  const invalid = err ? html` aria-invalid="true" aria-describedby="r-json-error"` : html``;
  const testInvalid = f.testError ? html` aria-invalid="true" aria-describedby="r-test-error"` : html``;
  return html`<form method="post" action="${base}">${csrfField(csrf)}
<fieldset><legend>Rules</legend>
${f.saved ? html`<p class="notice" role="status" data-saved>Saved.</p>` : ''}
<label for="r-json">Rules as JSON: <code>{"rules": [...], "default": "route" or "drop"}</code></label>
<textarea id="r-json" name="rules" rows="16" cols="80" spellcheck="false"${invalid}>${f.rules}</textarea>
${err ? html`<p class="error" role="alert" id="r-json-error" data-error-for="rules">${err}</p>` : ''}
<div class="actions"><button type="submit" class="primary">Save rules</button></div></fieldset>
<fieldset><legend>Dry run</legend>
<p class="note">Runs the rules in the box above (saved or not) without writing anything: on a payload you paste, or on the webhook's last 50 deliveries.</p>
<label for="r-payload">Payload JSON</label>
<textarea id="r-payload" name="payload" rows="8" cols="80" spellcheck="false"${testInvalid}>${f.payload}</textarea>
<label for="r-type">Event type (optional, e.g. <code>pull_request.opened</code>)</label><input id="r-type" name="type" maxlength="200" value="${f.type}">
${f.testError ? html`<p class="error" role="alert" id="r-test-error" data-error-for="payload">${f.testError}</p>` : ''}
<div class="actions"><button type="submit" formaction="${base}/test">Dry run</button> <button type="submit" formaction="${base}/test" name="last" value="50">Dry run on the last 50 deliveries</button></div></fieldset></form>`;
}

export function dryRunTable(results: DryRun): SafeHtml {
  if (results.length === 0) return html`<p class="note" role="status">No deliveries to run the rules on.</p>`;
  const head = joinHtml(
    ['Event', 'Rule', 'Action', 'Reason', 'Would make'].map((h) => html`<th scope="col">${h}</th>`),
  );
  const rows = results.map(
    (r) => html`<tr data-result="${r.action}"><td>${r.event_id ? html`<code>${r.event_id}</code>` : 'the payload'}</td>
<td>${r.rule_name || r.rule_id} <span class="note"><code>${r.rule_id}</code></span></td><td><span class="chip" data-action="${r.action}">${r.action}</span></td>
<td>${text(r.reason)}</td><td>${r.todos.length ? html`<ul class="plain">${r.todos.map((t) => planned(t))}</ul>` : dash}</td></tr>`,
  );
  return html`<table><caption class="note">Dry run results</caption><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`;
}
