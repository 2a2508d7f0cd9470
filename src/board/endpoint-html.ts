// HTML for endpoint cards: queues, verbs by family, live sessions (id, client, stream,
// "pulls (no stream)" or "reconnect needed", unheard mark, last ring, claims held, last seen, message queue link), last seen, and the revoke / delete forms. Slots marked data-slot="…" are
// where later parts land: "Run self-test" and its verdict and the unheard mark
// (docs/design/doorbell-acknowledgement.md), the budget link (docs/design/admission.md),
// notify hooks and presence (docs/design/hooks-and-presence.md).

import type { SessionView } from '../endpoints/board.js';
import type { EndpointView } from '../endpoints/manage.js';
import { VERB_FAMILIES, type VerbFamily } from '../domain/verbs.js';
import {
  agentMessagesField,
  budgetLinks,
  hooksSection,
  intakeLinks,
  presenceSection,
  selfTestButton,
  type CardExtras,
} from './endpoint-extras.js';
import { csrfField, html, isoTime, joinHtml, roughDuration, type SafeHtml } from './html.js';

/** Families wholly granted, then single verbs granted outside a whole family. */
export function verbSummary(verbs: readonly string[]): SafeHtml {
  const granted = new Set(verbs);
  const families = (Object.keys(VERB_FAMILIES) as VerbFamily[]).filter((f) =>
    VERB_FAMILIES[f].every((v) => granted.has(v)),
  );
  const covered = new Set<string>(families.flatMap((f) => [...VERB_FAMILIES[f]]));
  const loose = verbs.filter((v) => !covered.has(v));
  const items = [...families.map((f) => html`<strong>${f}</strong>`), ...loose.map((v) => html`<code>${v}</code>`)];
  return items.length ? joinHtml(items, ', ') : html`<span class="note">none</span>`;
}

/**
 * The stream cell: open; "pulls (no stream)" for a session that never opened one and did
 * not ask for doorbells (it waits on claim_next: nothing is wrong); else "reconnect
 * needed" — its stream dropped, or it declared claude/channel and has none to ring.
 */
export function streamState(s: SessionView): SafeHtml {
  if (s.stream_open) return html`<span class="chip open" data-slot="stream">open</span>`;
  if (!s.had_stream && !s.channel)
    return html`<span class="chip" data-slot="stream" title="this session never opened a notification stream and did not ask for doorbells: it pulls its work with claim_next">pulls (no stream)</span>`;
  return html`<span class="chip warn" data-slot="stream" title="no notification stream: the doorbell cannot reach this session until its client reconnects">reconnect needed</span>`;
}

export function lastRing(s: SessionView, now: Date): string {
  return s.last_ring_at ? `${roughDuration(now.getTime() - s.last_ring_at.getTime())} ago` : 'never';
}

export const unheardMark = (s: SessionView) =>
  s.unheard
    ? html`<span class="chip warn" data-slot="unheard" title="its last doorbells were delivered and none was heard">unheard</span>`
    : '';

function sessionRow(s: SessionView, now: Date): SafeHtml {
  const client = `${s.client_name ?? 'unknown'} ${s.client_version ?? ''}`;
  const seen = `${roughDuration(now.getTime() - s.last_seen_at.getTime())} ago`;
  return html`<tr data-session="${s.id}"><td><a href="/sessions/${s.id}"><code>${s.id}</code></a></td>
<td>${client} ${unheardMark(s)}</td><td>${streamState(s)}</td><td data-field="last_ring">${lastRing(s, now)}</td>
<td data-field="claims_held">${s.claims_held}</td><td>${seen}</td>
<td><a href="/sessions/${s.id}#message-queue">Messages <span class="sr">of ${s.id}</span></a></td></tr>`;
}

function sessionsTable(sessions: SessionView[], now: Date): SafeHtml {
  if (sessions.length === 0) return html`<p class="note">No live sessions.</p>`;
  const head = joinHtml(
    ['Session', 'Client', 'Stream', 'Last ring', 'Claims held', 'Last seen', 'Message queue'].map(
      (h) => html`<th scope="col">${h}</th>`,
    ),
  );
  const rows = joinHtml(sessions.map((s) => sessionRow(s, now)));
  return html`<table><caption class="note">Sessions</caption><thead><tr>${head}</tr></thead><tbody>${rows}</tbody></table>`;
}

function cardActions(e: EndpointView, csrf: string): SafeHtml {
  const post = (path: string, label: string, cls: string) =>
    html`<form method="post" action="/endpoints/${e.slug}/${path}" class="inline" hx-confirm="${label} ${e.name}? This cannot be undone.">${csrfField(csrf)}<button type="submit" class="${cls}">${label} <span class="sr">${e.name}</span></button></form>`;
  const edit =
    e.state === 'active' ? html`<a href="/endpoints/${e.slug}/edit">Edit <span class="sr">${e.name}</span></a> ` : '';
  return html`<div class="actions">${edit}${e.state === 'active' ? post('revoke', 'Revoke', 'danger') : post('delete', 'Delete', 'danger')}
${selfTestButton(e, csrf)}${budgetLinks(e)} <a href="/endpoints/${e.slug}/schedules">Schedules</a> ${intakeLinks(e)}</div>`;
}

/**
 * One endpoint's card. On the endpoint's own page (`own`) the page's h1 already names it,
 * so the card's heading says "Details" instead of repeating the name.
 */
export function endpointCard(
  view: { endpoint: EndpointView; sessions: SessionView[]; extras?: CardExtras },
  csrf: string,
  now: Date,
  own = false,
): SafeHtml {
  const e = view.endpoint;
  const extras = view.extras ?? { hooks: [], presence: null };
  const title = own ? 'Details' : html`<a href="/endpoints/${e.slug}">${e.name}</a>`;
  return html`<article data-endpoint="${e.slug}" aria-labelledby="ep-${e.id}">
<h2 id="ep-${e.id}">${title} <span class="chip ${e.state}">${e.state}</span></h2>
<dl><dt>Slug</dt><dd><code>${e.slug}</code></dd>
<dt>Queues</dt><dd>${joinHtml(
    e.queues.map((q) => html`<code>${q}</code>`),
    ', ',
  )}</dd>
<dt>Verbs</dt><dd>${verbSummary(e.verbs)}</dd>
${agentMessagesField(e, csrf)}
<dt>Last seen</dt><dd>${e.last_seen_at ? `${roughDuration(now.getTime() - e.last_seen_at.getTime())} ago` : 'never'}</dd>
<dt>Created</dt><dd>${isoTime(e.created_at)}</dd><dt>Expires</dt><dd>${e.expires_at ? isoTime(e.expires_at) : 'never'}</dd></dl>
${sessionsTable(view.sessions, now)}
${presenceSection(e, extras.presence, csrf)}${hooksSection(extras.hooks)}
${cardActions(e, csrf)}</article>`;
}

/** The live fragment of the endpoints page. */
export function endpointsFragment(
  views: Array<{ endpoint: EndpointView; sessions: SessionView[]; extras?: CardExtras }>,
  csrf: string,
  now: Date,
): SafeHtml {
  const body = views.length
    ? html`<div class="cards">${views.map((v) => endpointCard(v, csrf, now))}</div>`
    : html`<p>No endpoints yet.</p>`;
  return html`<div id="endpoint-cards">${body}</div>`;
}
