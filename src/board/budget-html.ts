// HTML for budgets (docs/design/admission.md, "The board"): the strip in a queue header
// (used of limit, in flight of cap, status, "resets at" in the policy's zone and in the
// viewer's: the browser's zone with JavaScript, UTC without), the reason chip on a
// deferred card, and the budget editor page with its audit list. A zone the runtime does
// not know is flagged: the queue fails closed (admission_unavailable) until it is fixed.

import type { AuditRow } from '../budgets/board.js';
import type { QueueStatus } from '../admission/status.js';
import { withError } from './field-errors.js';
import { csrfField, html, isoTime, joinHtml, type SafeHtml } from './html.js';

const REASONS: Record<string, string> = {
  window_exhausted: 'window used up',
  in_flight_full: 'in-flight cap full',
  paused: 'paused (cap 0)',
  admission_unavailable: 'unknown zone',
};

/** The instant on the policy zone's wall clock, or null when the zone is unknown here. */
export function inZone(iso: string, tz: string): string | null {
  try {
    const text = new Intl.DateTimeFormat('en-GB', {
      timeZone: tz,
      dateStyle: 'medium',
      timeStyle: 'short',
    }).format(new Date(iso));
    return `${text} ${tz}`;
  } catch {
    return null;
  }
}

function zoneKnown(tz: string): boolean {
  return inZone(new Date(0).toISOString(), tz) !== null;
}

function resets(s: QueueStatus): SafeHtml | null {
  const tz = s.policy.window?.tz;
  if (tz && !zoneKnown(tz)) {
    return html`<span class="chip warn" data-budget="unknown-zone">unknown zone ${tz}: nothing is admitted</span>`;
  }
  const at = s.usage?.window_resets_at;
  if (!at || !tz) return null;
  const local = html`<time datetime="${at}" data-local="policy" data-budget="resets-policy">${inZone(at, tz) ?? at}</time>`;
  const iso = new Date(at).toISOString();
  const viewer = html`<time data-budget="resets-viewer" datetime="${iso}">${iso.replace('T', ' ').slice(0, 19)} UTC</time>`;
  return html`<span>resets at ${local} <span class="note">(yours: ${viewer})</span></span>`;
}

/** The budget strip of one queue header; an empty slot when the queue has no budget. */
export function budgetStrip(s: QueueStatus | undefined, budgetHref: string): SafeHtml {
  if (!s)
    return html`<div class="slot budget" data-slot="budget-strip"><a href="${budgetHref}" class="note">Set a budget</a></div>`;
  const u = s.usage;
  const parts: SafeHtml[] = [];
  if (s.policy.max_claims_per_window !== null) {
    parts.push(html`<span data-budget="used">used ${u?.used ?? 0} of ${s.policy.max_claims_per_window}</span>`);
  }
  if (s.policy.max_in_flight !== null) {
    parts.push(html`<span data-budget="in-flight">in flight ${u?.in_flight ?? 0} of ${s.policy.max_in_flight}</span>`);
  }
  const deferred = s.status.state === 'deferred';
  parts.push(
    html`<span class="chip ${deferred ? 'deferred' : 'open'}" data-budget="status">${deferred ? `deferred: ${REASONS[s.status.reason ?? ''] ?? s.status.reason ?? ''}` : 'open'}</span>`,
  );
  const r = resets(s);
  if (r) parts.push(r);
  return html`<div class="slot budget" data-slot="budget-strip" data-state="${s.status.state}">${joinHtml(parts, ' · ')} <a href="${budgetHref}">Budget</a></div>`;
}

/** The reason chip on a pending card of a deferred queue (empty otherwise). */
export function deferredChip(s: QueueStatus | undefined, state: string): SafeHtml {
  if (!s || state !== 'pending' || s.status.state !== 'deferred')
    return html`<span class="slot" data-slot="deferred-chip"></span>`;
  const reason = s.status.reason ?? '';
  return html`<span class="slot chip deferred" data-slot="deferred-chip" data-reason="${reason}">deferred · ${REASONS[reason] ?? reason}</span>`;
}

export interface BudgetValues {
  max_in_flight?: string;
  max_claims_per_window?: string;
  period?: string;
  tz?: string;
  start?: string;
  weekday?: string;
}

export function valuesOf(s: QueueStatus | null): BudgetValues {
  const w = s?.policy.window;
  return {
    max_in_flight: s?.policy.max_in_flight?.toString() ?? '',
    max_claims_per_window: s?.policy.max_claims_per_window?.toString() ?? '',
    period: w?.period ?? '',
    tz: w?.tz ?? 'UTC',
    start: w?.start ?? '00:00',
    weekday: w && 'weekday' in w ? w.weekday : 'Mon',
  };
}

const select = (id: string, name: string, options: string[], value: string | undefined) =>
  html`<select id="${id}" name="${name}">${options.map((o) => html`<option value="${o}"${o === value ? ' selected' : ''}>${o || 'none'}</option>`)}</select>`;

function editorForm(action: string, csrf: string, v: BudgetValues): SafeHtml {
  const input = (id: string, label: string, name: keyof BudgetValues, extra: SafeHtml) =>
    html`<label for="${id}">${label}</label><input id="${id}" name="${name}" ${extra} value="${v[name] ?? ''}">`;
  return html`<form method="post" action="${action}">${csrfField(csrf)}
${input('b-in-flight', 'Max in flight (empty: no cap; 0 pauses)', 'max_in_flight', html`inputmode="numeric"`)}
${input('b-per-window', 'Max claims per window (empty: no limit)', 'max_claims_per_window', html`inputmode="numeric"`)}
<label for="b-period">Window</label>${select('b-period', 'period', ['', 'hour', 'day', 'week'], v.period)}
${input('b-tz', 'Window zone (IANA, e.g. Europe/Berlin)', 'tz', html``)}
${input('b-start', 'Window starts at (HH:MM, local)', 'start', html`pattern="[0-2][0-9]:[0-5][0-9]"`)}
<label for="b-weekday">Weekday (week windows)</label>${select('b-weekday', 'weekday', ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'], v.weekday)}
<div class="actions"><button type="submit" class="primary">Save budget</button></div></form>`;
}

const shown = (v: unknown) => (v === null || v === undefined ? 'none' : typeof v === 'string' ? v : JSON.stringify(v));

/** An audit row's change as "field: old → new", one line per field that changed. */
export function auditChanges(before: unknown, after: unknown): SafeHtml {
  const b = (before ?? {}) as Record<string, unknown>;
  const a = (after ?? {}) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])];
  const lines = keys
    .filter((k) => shown(b[k]) !== shown(a[k]))
    .map((k) => html`<li data-change="${k}"><code>${k}</code>: ${shown(b[k])} → ${shown(a[k])}</li>`);
  return lines.length ? html`<ul class="changes">${lines}</ul>` : html`<span class="note">no change</span>`;
}

function auditList(audit: AuditRow[]): SafeHtml {
  if (audit.length === 0) return html`<p class="note">No changes yet.</p>`;
  const who = (a: AuditRow) =>
    html`${a.actor_email ?? a.actor_human_id}${a.actor_endpoint_id ? html` via agent <code>${a.actor_endpoint_id}</code>` : ''}`;
  const rows = joinHtml(
    audit.map(
      (a) =>
        html`<tr data-audit="${a.action}"><td>${isoTime(a.at)}</td><td>${a.action}</td><td>${who(a)}</td><td>${auditChanges(a.before, a.after)}</td></tr>`,
    ),
  );
  return html`<table><caption class="note">Changes, newest first</caption><thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">By</th><th scope="col">Changes</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function budgetEditor(a: {
  base: string;
  csrf: string;
  status: QueueStatus | null;
  audit: AuditRow[];
  values: BudgetValues;
  error?: string;
  viewer: { id: string; email: string };
}): SafeHtml {
  const current = a.status
    ? budgetStrip(a.status, a.base)
    : html`<p class="note">No budget: every claim is admitted.</p>`;
  const clear = a.status
    ? html`<form method="post" action="${a.base}/clear" class="inline">${csrfField(a.csrf)}<button type="submit" class="danger">Remove budget</button></form>`
    : '';
  return html`<section aria-labelledby="b-now"><h2 id="b-now">Now</h2>${current}</section>
<section aria-labelledby="b-edit"><h2 id="b-edit">${a.status ? 'Change' : 'Set'} the budget</h2>${withError(editorForm(a.base, a.csrf, a.values), a.error)}${clear}</section>
<section aria-labelledby="b-audit"><h2 id="b-audit">Audit</h2>${auditList(a.audit)}</section>`;
}
