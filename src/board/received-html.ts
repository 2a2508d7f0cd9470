// HTML for the "Received" view of an endpoint (docs/design/intake.md, "The event
// history" and "Replay"): the list of its latest events, newest first, and one event with
// its stored headers (already sanitized when stored: no signature, token or cookie),
// payload and trace as escaped, pretty-printed JSON, and the Replay button.

import type { listEventsOf, showEvent } from '../webhooks/events.js';
import { csrfField, html, isoTime, type SafeHtml, joinHtml } from './html.js';

type Summary = Awaited<ReturnType<typeof listEventsOf>>['events'][number];
type Detail = Awaited<ReturnType<typeof showEvent>>['event'];

const dash = html`<span class="note">—</span>`;
const text = (v: string | null) => (v === null || v === '' ? dash : v);
const code = (v: string | null) => (v === null || v === '' ? dash : html`<code>${v}</code>`);

const verified = (e: Summary) =>
  e.verified
    ? html`<span class="chip open" data-verified="true">signed</span>`
    : html`<span class="chip warn" data-verified="false">URL only</span>`;

const disposition = (e: Summary) =>
  html`<span class="chip${e.disposition === 'routed' ? ' open' : ' warn'}" data-disposition="${e.disposition}">${e.disposition}</span>`;

/** The todos an event made, each linked to its page. */
const todoLinks = (ids: string[]) =>
  ids.length
    ? joinHtml(
        ids.map((id) => html`<a href="/todos/${id}"><code>${id}</code></a>`),
        ' ',
      )
    : dash;

function row(e: Summary, base: string): SafeHtml {
  const replay = e.replay_of ? html` <span class="chip">replay</span>` : '';
  return html`<tr data-event="${e.id}"><td>${isoTime(e.received_at)}</td>
<td><a href="${base}/${e.id}"><code>${e.id}</code></a>${replay}</td><td>${e.provider}</td>
<td>${text(e.type)}</td><td>${text(e.actor)}</td><td>${code(e.delivery_id)}</td><td>${verified(e)}</td>
<td>${disposition(e)}</td><td>${todoLinks(e.todo_ids)}</td></tr>`;
}

/** The list, with links to see more of it while it is full (the history answers at most `max`). */
export function eventTable(events: Summary[], base: string, limit: number, max: number): SafeHtml {
  if (events.length === 0) return html`<p class="note">Nothing received yet.</p>`;
  const head = joinHtml(
    ['Received', 'Event', 'Provider', 'Type', 'Actor', 'Delivery id', 'Verified', 'Disposition', 'Todos'].map(
      (h) => html`<th scope="col">${h}</th>`,
    ),
  );
  const full = events.length >= limit;
  const more =
    full && limit < max
      ? html`<p><a href="${base}?limit=${max}">Show the latest ${max}</a></p>`
      : full
        ? html`<p class="note">Only the latest ${max} are listed; older events are kept until retention removes them.</p>`
        : '';
  return html`<table><caption class="note">The latest ${events.length} events, newest first</caption><thead><tr>${head}</tr></thead>
<tbody>${events.map((e) => row(e, base))}</tbody></table>${more}`;
}

const pretty = (value: unknown) =>
  value === null || value === undefined ? dash : html`<pre>${JSON.stringify(value, null, 2)}</pre>`;

function headerTable(headers: Record<string, string>): SafeHtml {
  const entries = Object.entries(headers);
  if (entries.length === 0) return html`<p class="note">No headers kept.</p>`;
  const rows = entries.map(([k, v]) => html`<tr><th scope="row"><code>${k}</code></th><td>${v}</td></tr>`);
  return html`<table><caption class="note">Headers as stored (signatures, tokens and cookies are never kept)</caption><thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function eventDetail(e: Detail, base: string, csrf: string): SafeHtml {
  const replayOf = e.replay_of
    ? html`<p class="notice" role="status" data-replay-of="${e.replay_of}">This event is a replay of <a href="${base}/${e.replay_of}"><code>${e.replay_of}</code></a>; it made ${todoLinks(e.todo_ids)}.</p>`
    : '';
  return html`${replayOf}<dl data-event="${e.id}"><dt>Event</dt><dd><code>${e.id}</code></dd>
<dt>Received</dt><dd>${isoTime(e.received_at)}</dd><dt>Provider</dt><dd>${e.provider}</dd>
<dt>Type</dt><dd>${text(e.type)}</dd><dt>Actor</dt><dd>${text(e.actor)}</dd><dt>Delivery id</dt><dd>${code(e.delivery_id)}</dd>
<dt>Verified</dt><dd>${verified(e)}</dd><dt>Disposition</dt><dd>${disposition(e)}</dd><dt>Queue</dt><dd><code>${e.queue}</code></dd>
<dt>Todos</dt><dd>${todoLinks(e.todo_ids)}</dd><dt>Content type</dt><dd>${text(e.content_type)}</dd>
<dt>Replay of</dt><dd>${e.replay_of ? html`<a href="${base}/${e.replay_of}"><code>${e.replay_of}</code></a>` : dash}</dd></dl>
<form method="post" action="${base}/${e.id}/replay" class="inline">${csrfField(csrf)}<button type="submit">Replay <span class="sr">${e.id}</span></button></form>
<p class="note">Replay makes the todo again from this stored delivery, as a new event linked to this one; this one is left as it is.</p>
<section aria-labelledby="ev-headers"><h2 id="ev-headers">Headers</h2>${headerTable(e.headers)}</section>
<section aria-labelledby="ev-payload"><h2 id="ev-payload">Payload</h2>${pretty(e.payload)}</section>
<section aria-labelledby="ev-trace"><h2 id="ev-trace">Trace</h2>${pretty(e.trace)}</section>`;
}
