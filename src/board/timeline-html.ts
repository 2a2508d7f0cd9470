// A todo's timeline in its drawer and on its page (docs/board.md, "The todo drawer";
// src/todos/timeline.ts): one ordered list, oldest first, each step with its time as a
// <time>, what happened, who did it, and what it carried (a question, an answer, a child's
// id). Every value is data through the `html` tag. A session is linked while it is live, an
// endpoint when it is the viewer's; anything else is text (a child on another owner's
// endpoint is not this human's to open).

import type { Timeline, TimelineEntry, TimelineKind, TimelineWho } from '../todos/timeline.js';
import { html, isoTime, joinHtml, type SafeHtml } from './html.js';

const WORDS: Record<TimelineKind, string> = {
  created: 'created',
  rung: 'rung',
  claimed: 'claimed',
  asked: 'asked a human',
  answered: 'answered',
  timed_out: 'question timed out',
  done: 'done',
  failed: 'failed',
  released: 'released',
  lapsed: 'lease lapsed',
  revoked: 'endpoint revoked',
  canceled: 'canceled',
  handed_off: 'handed off',
  replied: 'replied to the sender',
};

export interface TimelineLinks {
  /** Session ids with a page to open (live ones). */
  liveSessions: ReadonlySet<string>;
  /** Slugs of the viewer's endpoints. */
  endpoints: ReadonlySet<string>;
}

function whoOf(who: TimelineWho, links: TimelineLinks): SafeHtml {
  const ref = who.ref;
  switch (who.type) {
    case 'session':
      if (!ref) return html`a session`;
      return links.liveSessions.has(ref)
        ? html`session <a href="/sessions/${ref}" data-session-link><code>${ref}</code></a>`
        : html`session <code>${ref}</code>`;
    case 'endpoint':
      if (!ref) return html`an endpoint`;
      return links.endpoints.has(ref)
        ? html`endpoint <a href="/endpoints/${ref}"><code>${ref}</code></a>`
        : html`endpoint <code>${ref}</code>`;
    case 'human':
      return ref ? html`${ref}` : html`a person`;
    case 'webhook':
      return ref ? html`webhook event <code>${ref}</code>` : html`a webhook`;
    case 'schedule':
      return ref ? html`schedule <code>${ref}</code>` : html`a schedule`;
    case 'server':
      return html`Switchboard`;
    case 'unrecorded':
      return html`not recorded`;
  }
}

function entry(e: TimelineEntry, links: TimelineLinks): SafeHtml {
  const detail = e.detail === null ? '' : html` — <span data-detail>${e.detail}</span>`;
  return html`<li data-kind="${e.kind}" data-who="${e.who.ref ?? ''}">${isoTime(e.at)} <strong>${WORDS[e.kind]}</strong> by <span data-who-label>${whoOf(e.who, links)}</span>${detail}</li>`;
}

export function timelineSection(timeline: Timeline | undefined, links: TimelineLinks): SafeHtml {
  if (!timeline) return html``;
  const cut = timeline.truncated
    ? html`<p class="note" data-cut>Only the latest ${timeline.entries.length} entries are shown; older ones are left out.</p>`
    : '';
  return html`<section data-slot="timeline"><h3>Timeline</h3>${cut}<ol class="timeline">${joinHtml(
    timeline.entries.map((e) => entry(e, links)),
  )}</ol></section>`;
}
