// HTML for the "Received" view of an endpoint (docs/design/intake.md, "The event
// history" and "Replay"): the list of its latest events, newest first, and one event with
// its stored headers (already sanitized when stored: no signature, token or cookie),
// payload and trace as escaped, pretty-printed JSON, and the Replay button.

import type { listEventsOf, showEvent } from '../webhooks/events.js';
import { csrfField, escape, isoTime } from './html.js';

type Summary = Awaited<ReturnType<typeof listEventsOf>>['events'][number];
type Detail = Awaited<ReturnType<typeof showEvent>>['event'];

const dash = '<span class="note">—</span>';
const text = (v: string | null) => (v === null || v === '' ? dash : escape(v));
const code = (v: string | null) => (v === null || v === '' ? dash : `<code>${escape(v)}</code>`);

const verified = (e: Summary) =>
  e.verified
    ? '<span class="chip open" data-verified="true">signed</span>'
    : '<span class="chip warn" data-verified="false">URL only</span>';

const disposition = (e: Summary) =>
  `<span class="chip${e.disposition === 'routed' ? ' open' : ' warn'}" data-disposition="${escape(e.disposition)}">${escape(e.disposition)}</span>`;

/** The todos an event made, each linked to its page. */
const todoLinks = (ids: string[]) =>
  ids.length ? ids.map((id) => `<a href="/todos/${escape(id)}"><code>${escape(id)}</code></a>`).join(' ') : dash;

function row(e: Summary, base: string): string {
  const replay = e.replay_of ? ' <span class="chip">replay</span>' : '';
  return `<tr data-event="${escape(e.id)}"><td>${isoTime(e.received_at)}</td>
<td><a href="${base}/${escape(e.id)}"><code>${escape(e.id)}</code></a>${replay}</td><td>${escape(e.provider)}</td>
<td>${text(e.type)}</td><td>${text(e.actor)}</td><td>${code(e.delivery_id)}</td><td>${verified(e)}</td>
<td>${disposition(e)}</td><td>${todoLinks(e.todo_ids)}</td></tr>`;
}

/** The list, with links to see more of it while it is full (the history answers at most `max`). */
export function eventTable(events: Summary[], base: string, limit: number, max: number): string {
  if (events.length === 0) return '<p class="note">Nothing received yet.</p>';
  const head = ['Received', 'Event', 'Provider', 'Type', 'Actor', 'Delivery id', 'Verified', 'Disposition', 'Todos']
    .map((h) => `<th scope="col">${h}</th>`)
    .join('');
  const full = events.length >= limit;
  const more =
    full && limit < max
      ? `<p><a href="${base}?limit=${max}">Show the latest ${max}</a></p>`
      : full
        ? `<p class="note">Only the latest ${max} are listed; older events are kept until retention removes them.</p>`
        : '';
  return `<table><caption class="note">The latest ${events.length} events, newest first</caption><thead><tr>${head}</tr></thead>
<tbody>${events.map((e) => row(e, base)).join('')}</tbody></table>${more}`;
}

const pretty = (value: unknown) =>
  value === null || value === undefined ? dash : `<pre>${escape(JSON.stringify(value, null, 2))}</pre>`;

function headerTable(headers: Record<string, string>): string {
  const entries = Object.entries(headers);
  if (entries.length === 0) return '<p class="note">No headers kept.</p>';
  const rows = entries.map(([k, v]) => `<tr><th scope="row"><code>${escape(k)}</code></th><td>${escape(v)}</td></tr>`);
  return `<table><caption class="note">Headers as stored (signatures, tokens and cookies are never kept)</caption><thead><tr><th scope="col">Name</th><th scope="col">Value</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

export function eventDetail(e: Detail, base: string, csrf: string): string {
  const replayOf = e.replay_of
    ? `<p class="notice" role="status" data-replay-of="${escape(e.replay_of)}">This event is a replay of <a href="${base}/${escape(e.replay_of)}"><code>${escape(e.replay_of)}</code></a>; it made ${todoLinks(e.todo_ids)}.</p>`
    : '';
  return `${replayOf}<dl data-event="${escape(e.id)}"><dt>Event</dt><dd><code>${escape(e.id)}</code></dd>
<dt>Received</dt><dd>${isoTime(e.received_at)}</dd><dt>Provider</dt><dd>${escape(e.provider)}</dd>
<dt>Type</dt><dd>${text(e.type)}</dd><dt>Actor</dt><dd>${text(e.actor)}</dd><dt>Delivery id</dt><dd>${code(e.delivery_id)}</dd>
<dt>Verified</dt><dd>${verified(e)}</dd><dt>Disposition</dt><dd>${disposition(e)}</dd><dt>Queue</dt><dd><code>${escape(e.queue)}</code></dd>
<dt>Todos</dt><dd>${todoLinks(e.todo_ids)}</dd><dt>Content type</dt><dd>${text(e.content_type)}</dd>
<dt>Replay of</dt><dd>${e.replay_of ? `<a href="${base}/${escape(e.replay_of)}"><code>${escape(e.replay_of)}</code></a>` : dash}</dd></dl>
<form method="post" action="${base}/${escape(e.id)}/replay" class="inline">${csrfField(csrf)}<button type="submit">Replay <span class="sr">${escape(e.id)}</span></button></form>
<p class="note">Replay makes the todo again from this stored delivery, as a new event linked to this one; this one is left as it is.</p>
<section aria-labelledby="ev-headers"><h2 id="ev-headers">Headers</h2>${headerTable(e.headers)}</section>
<section aria-labelledby="ev-payload"><h2 id="ev-payload">Payload</h2>${pretty(e.payload)}</section>
<section aria-labelledby="ev-trace"><h2 id="ev-trace">Trace</h2>${pretty(e.trace)}</section>`;
}
