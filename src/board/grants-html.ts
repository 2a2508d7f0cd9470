// HTML for the board's grants page (docs/design/handoff.md, "Grants"): both directions in
// one table, each row with the actions its viewer may take (approve or deny a request to
// one of their endpoints, revoke any live grant), and the request form. Slugs and queue
// names are data and go through the `html` tag like any other text.

import type { GrantView } from '../grants/manage.js';
import { csrfField, errorLine, html, isoTime, joinHtml, stateChip, type SafeHtml } from './html.js';

/** A grant row as the page shows it: which side of it the viewer is on. */
export interface GrantRowView {
  grant: GrantView;
  /** The viewer owns the target: they decide a request. */
  incoming: boolean;
}

function actions(g: GrantRowView, csrf: string): SafeHtml {
  const form = (action: string, label: string) =>
    html`<form method="post" action="/grants/${g.grant.id}/${action}" class="inline">${csrfField(csrf)}<button type="submit" data-action="${action}">${label}</button></form>`;
  const live = g.grant.state === 'active' || g.grant.state === 'requested';
  return joinHtml(
    [
      ...(g.grant.state === 'requested' && g.incoming ? [form('approve', 'Approve'), form('deny', 'Deny')] : []),
      ...(live ? [form('revoke', g.grant.state === 'requested' && !g.incoming ? 'Withdraw' : 'Revoke')] : []),
    ],
    ' ',
  );
}

export function grantsTable(rows: GrantRowView[], csrf: string): SafeHtml {
  if (rows.length === 0) return html`<p class="note">No grants yet.</p>`;
  const head = joinHtml(
    ['Created', 'From', 'To', 'Queues', 'Limits', 'State', 'Actions'].map((h) => html`<th scope="col">${h}</th>`),
  );
  const body = rows.map((r) => {
    const g = r.grant;
    const limits = [
      g.max_priority === null ? '' : `priority ≤ ${g.max_priority}`,
      g.rate_per_hour === null ? '' : `${g.rate_per_hour}/h`,
    ]
      .filter(Boolean)
      .join(', ');
    return html`<tr data-grant="${g.id}" data-direction="${r.incoming ? 'in' : 'out'}"><td>${isoTime(g.created_at)}</td>
<td><code>${g.from}</code></td><td><code>${g.to}</code></td><td>${g.queues.join(', ')}</td><td>${limits || '—'}</td>
<td>${stateChip(g.state)}</td><td>${actions(r, csrf)}</td></tr>`;
  });
  return html`<table><caption class="note">Grants from and to your endpoints, newest first</caption><thead><tr>${head}</tr></thead>
<tbody>${body}</tbody></table>`;
}

export interface RequestForm {
  from: string;
  to: string;
  queues: string;
  error?: string;
}

/** The request form: one of your endpoints, a target slug, its queues. */
export function requestForm(mine: { slug: string; name: string }[], form: RequestForm, csrf: string): SafeHtml {
  const options = mine.map(
    (e) => html`<option value="${e.slug}"${e.slug === form.from && html` selected`}>${e.name} (${e.slug})</option>`,
  );
  return html`<h2>Grant or request a hand-off</h2>
<p class="note">Between two of your endpoints the grant is active at once; to another owner's endpoint it is a request that owner approves or denies here.</p>
<form method="post" action="/grants" class="stack">${csrfField(csrf)}${form.error ? errorLine(form.error) : html``}
<label for="grant-from">From (your endpoint)</label><select id="grant-from" name="from">${options}</select>
<label for="grant-to">To (endpoint slug)</label><input id="grant-to" name="to" required value="${form.to}">
<label for="grant-queues">Queues (separated by commas or spaces)</label><input id="grant-queues" name="queues" required value="${form.queues}">
<button type="submit">Grant</button></form>`;
}

const DONE = {
  created: 'Granted',
  requested: 'Requested',
  approve: 'Approved',
  deny: 'Denied',
  revoke: 'Revoked',
} as const;
export type Done = keyof typeof DONE;

export function doneNotice(done: string | undefined, id: string | undefined): SafeHtml {
  if (!done || !id || !(done in DONE)) return html``;
  return html`<p class="notice" role="status" data-done="${done}">${DONE[done as Done]} <code>${id}</code>.</p>`;
}
