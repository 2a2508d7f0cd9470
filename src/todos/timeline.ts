// A todo's timeline (docs/design/ask-human.md, "History"): what happened to it, oldest
// first, with who did each — made (by a person, an agent, a hand-off, a webhook or a
// schedule), rung, claimed, asked, answered or timed out, ended (done, failed, released,
// lapsed, canceled), the todos handed from it and the reply it sent back. Assembled at
// read time from the rows those steps already leave (todos, doorbell_rings,
// todo_attempts, todo_asks, todo_links, handoff_replies); nothing is written for it.
// It does not know what nobody recorded: who canceled a todo, or a human's retry.

import type { Queryable } from '../db/pool.js';
import { listTodoRings, type TodoRing } from '../store/todo-rings.js';
import {
  timelineAsks,
  timelineAttempts,
  timelineChildren,
  timelineOrigin,
  timelineReply,
  type TimelineAsk,
  type TimelineAttempt,
  type TimelineChild,
  type TimelineOrigin,
  type TimelineReply,
} from '../store/todo-timeline.js';

/**
 * Entries shown per todo, the newest: enough for every step of a todo that was tried,
 * asked about and rung to its limits many times over; a longer history is cut (and says
 * so) rather than read whole on every drawer open.
 */
export const TIMELINE_SHOWN = 200;

export type TimelineKind =
  | 'created'
  | 'rung'
  | 'claimed'
  | 'asked'
  | 'answered'
  | 'timed_out'
  | 'done'
  | 'failed'
  | 'released'
  | 'lapsed'
  | 'revoked'
  | 'canceled'
  | 'handed_off'
  | 'replied';

/** Who did a step: a person (email), an endpoint (slug), a session (id), or the server itself. */
export interface TimelineWho {
  type: 'human' | 'endpoint' | 'session' | 'webhook' | 'schedule' | 'server' | 'unrecorded';
  /** The email, slug or id, when there is one. */
  ref: string | null;
}

export interface TimelineEntry {
  at: Date;
  kind: TimelineKind;
  who: TimelineWho;
  /** Plain text (a question, an answer, a todo id): the surface escapes it. */
  detail: string | null;
  /** The todo this entry points at (a child handed off, a reply todo), when there is one. */
  todo_id?: string;
}

export interface Timeline {
  entries: TimelineEntry[];
  /** True when older entries were left out (more than TIMELINE_SHOWN). */
  truncated: boolean;
}

/** Everything read for one todo; each list newest first. */
export interface TimelineSources {
  origin: TimelineOrigin;
  rings: TodoRing[];
  attempts: TimelineAttempt[];
  asks: TimelineAsk[];
  children: TimelineChild[];
  reply: TimelineReply | null;
}

// Steps one transaction takes share its now(): a claim acks the ring it answers, an ask
// closes the attempt it ends. Within one instant the entries go in the order they happen.
const RANK: Record<TimelineKind, number> = {
  created: 0,
  rung: 1,
  claimed: 2,
  handed_off: 3,
  asked: 4,
  done: 4,
  failed: 4,
  released: 4,
  lapsed: 4,
  revoked: 4,
  answered: 5,
  timed_out: 5,
  canceled: 6,
  replied: 7,
};

const ENDED: Record<string, TimelineKind> = {
  completed: 'done',
  failed: 'failed',
  released: 'released',
  lease_expired: 'lapsed',
  reaped: 'lapsed',
  revoked: 'revoked',
};

const server: TimelineWho = { type: 'server', ref: null };

function created(o: TimelineOrigin): TimelineEntry {
  const entry = (who: TimelineWho, detail: string | null = null): TimelineEntry => ({
    at: o.created_at,
    kind: 'created',
    who,
    detail,
  });
  if (o.schedule_id) return entry({ type: 'schedule', ref: o.schedule_id });
  if (o.event_id || o.source === 'webhook') return entry({ type: 'webhook', ref: o.event_id }, o.source);
  if (o.endpoint) return entry({ type: 'endpoint', ref: o.endpoint });
  if (o.human) return entry({ type: 'human', ref: o.human }, o.source);
  return entry({ type: 'unrecorded', ref: null }, o.source);
}

function rung(r: TodoRing): TimelineEntry {
  const heard = r.acked_at
    ? `heard${r.unheard_at ? ' late' : ''} (${r.ack_via === 'claim' ? 'claimed' : 'ack_doorbell'}${r.acked_session_id ? ` by ${r.acked_session_id}` : ''})`
    : r.unheard_at
      ? 'unheard'
      : 'no answer yet';
  return { at: r.sent_at, kind: 'rung', who: { type: 'session', ref: r.session_id }, detail: heard };
}

function attemptEntries(a: TimelineAttempt): TimelineEntry[] {
  const who: TimelineWho = { type: 'session', ref: a.session_id };
  const out: TimelineEntry[] = [{ at: a.claimed_at, kind: 'claimed', who, detail: `attempt ${a.seq}` }];
  // An asked attempt is told by its question, a canceled one by the todo's cancel.
  const kind = a.outcome ? ENDED[a.outcome] : undefined;
  if (a.ended_at && kind) {
    const by = kind === 'lapsed' || kind === 'revoked' ? server : who;
    out.push({ at: a.ended_at, kind, who: by, detail: kind === 'lapsed' ? 'the lease ran out' : null });
  }
  return out;
}

function askEntries(q: TimelineAsk): TimelineEntry[] {
  const out: TimelineEntry[] = [
    { at: q.asked_at, kind: 'asked', who: { type: 'session', ref: q.session_id }, detail: q.question },
  ];
  if (!q.ended_at) return out;
  if (q.outcome === 'answered') {
    const choice = q.answer_choice === null ? null : (q.choices?.[q.answer_choice] ?? `choice ${q.answer_choice}`);
    out.push({
      at: q.ended_at,
      kind: 'answered',
      who: { type: 'human', ref: q.answered_by },
      detail: choice ?? q.answer_text,
    });
  } else if (q.outcome === 'timed_out') {
    out.push({ at: q.ended_at, kind: 'timed_out', who: server, detail: 'nobody answered in time' });
  }
  return out;
}

function replyEntry(r: TimelineReply): TimelineEntry {
  const to: TimelineWho = { type: 'endpoint', ref: r.endpoint };
  if (!r.delivered_at) return { at: r.created_at, kind: 'replied', who: to, detail: `${r.state}; not delivered yet` };
  const how =
    r.delivered_as === 'message'
      ? `${r.state}; told session ${r.delivered_ref ?? ''} as a message`
      : r.delivered_as === 'todo'
        ? `${r.state}; as a todo on its queue`
        : `${r.state}; dropped (the sender was revoked)`;
  return {
    at: r.delivered_at,
    kind: 'replied',
    who: to,
    detail: how,
    ...(r.delivered_as === 'todo' && r.delivered_ref ? { todo_id: r.delivered_ref } : {}),
  };
}

/** The entries of what was read, oldest first, the newest `limit` of them. Pure. */
export function assembleTimeline(s: TimelineSources, limit = TIMELINE_SHOWN): Timeline {
  const entries: TimelineEntry[] = [
    created(s.origin),
    ...s.rings.map(rung),
    ...s.attempts.flatMap(attemptEntries),
    ...s.asks.flatMap(askEntries),
    ...s.children.map((c): TimelineEntry => ({
      at: c.created_at,
      kind: 'handed_off',
      who: { type: 'endpoint', ref: s.origin.own_endpoint },
      detail: `${c.id} to ${c.endpoint}${c.queue ? `/${c.queue}` : ''}${c.reply ? ', reply asked' : ''}`,
      todo_id: c.id,
    })),
    ...(s.reply ? [replyEntry(s.reply)] : []),
  ];
  if (s.origin.state === 'canceled' && s.origin.completed_at) {
    entries.push({ at: s.origin.completed_at, kind: 'canceled', who: { type: 'unrecorded', ref: null }, detail: null });
  }
  const ordered = entries
    .map((e, i) => ({ e, i }))
    .sort((x, y) => x.e.at.getTime() - y.e.at.getTime() || RANK[x.e.kind] - RANK[y.e.kind] || x.i - y.i)
    .map(({ e }) => e);
  return { entries: ordered.slice(-limit), truncated: ordered.length > limit };
}

/**
 * The timeline of todo `id` of this endpoint (the caller has checked the todo is theirs),
 * or null when there is no such todo. Each source reads one more than it shows, so a cut
 * is known.
 */
export async function todoTimeline(db: Queryable, endpointId: string, id: string): Promise<Timeline | null> {
  const n = TIMELINE_SHOWN + 1;
  const [origin, rings, attempts, asks, children, reply] = await Promise.all([
    timelineOrigin(db, endpointId, id),
    listTodoRings(db, endpointId, id, n),
    timelineAttempts(db, endpointId, id, n),
    timelineAsks(db, endpointId, id, n),
    timelineChildren(db, endpointId, id, n),
    timelineReply(db, endpointId, id),
  ]);
  if (!origin) return null;
  return assembleTimeline({ origin, rings, attempts, asks, children, reply });
}
