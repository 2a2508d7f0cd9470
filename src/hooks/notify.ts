// Notify hooks as a service of one instance: hears todo_ready from any instance, decides
// in the database which ready transitions are this instance's to deliver (so each is
// delivered once across instances), and queues one signed notification per matching
// hook. Also sends the `todos.backlog` notification of a clock-in digest and the
// `todo.waiting_on_human` one of an agent's question (docs/design/ask-human.md).
// Never for synthetic todos, deduplicated creates (no transition), heartbeat re-rings (no
// todo_ready) or deferred queues (isPushEligible); held while the endpoint is out unless
// the hook ignores presence.

import type { Logger } from 'pino';
import { ulid } from 'ulid';
import type { Pool } from '../db/pool.js';
import { neutralise } from '../doorbell/content.js';
import {
  claimReadyTransitions,
  enabledHooks,
  queuesWithUndecided,
  type HookTargetRow,
  type ReadyTransition,
} from '../store/notify-hooks.js';
import type { HookDelivery } from './delivery.js';
import { isPushEligible } from './eligibility.js';
import type { Bus } from '../domain/events.js';

/** Transitions claimed per statement; a burst drains in a few round trips. */
const BATCH = 50;
/**
 * Older ready transitions are not announced. A week, the longest admission window: work
 * held back by a deferred queue stays undecided and is announced when the queue reopens.
 */
const MAX_AGE_SECONDS = 7 * 86_400;
/** The body stays identifiers only and under 4 KiB. */
export const MAX_BODY_BYTES = 4_096;
const SUMMARY_CHARS = 200;
/** The sweep leaves transitions this young to their todo_ready notice, still in flight. */
const NOTICE_GRACE_SECONDS = 5;
/** Queues the sweep catches up per tick; the rest wait for the next tick. */
const SWEEP_PAIRS = 200;
const LABEL_CHARS = 100;

export interface BacklogSummary {
  slug: string;
  reason: string;
  pending: number;
  queues: string[];
  oldestPendingSeconds: number;
}

const cut = (text: string | null, n: number) => (text === null ? null : [...neutralise(text)].slice(0, n).join(''));

export function readyBody(todo: ReadyTransition, slug: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: 'todo.ready',
    reason: todo.reason,
    todo_id: todo.id,
    queue: todo.queue,
    kind: cut(todo.kind, LABEL_CHARS),
    source: cut(todo.source, LABEL_CHARS),
    summary: cut(todo.title, SUMMARY_CHARS),
    endpoint: slug,
    created_at: todo.created_at.toISOString(),
  };
  if (Buffer.byteLength(JSON.stringify(body)) > MAX_BODY_BYTES - 32) body.summary = null;
  return body;
}

/** A todo parked on a question, as the hooks tell its owner. */
export interface WaitingOnHuman {
  endpointId: string;
  todoId: string;
  queue: string;
  title: string;
  question: string;
  choices: string[] | null;
  askedAt: Date;
  expiresAt: Date;
  traceparent: string | null;
}

/** How many characters of the question a hook carries: enough for a chat message, and under the body cap. */
const QUESTION_CHARS = 1_000;
const CHOICE_CHARS = 100;

/**
 * The todo.waiting_on_human body: identifiers, the question and its choices cut short,
 * so a Slack hook can post it; under MAX_BODY_BYTES (the choices go first if need be).
 */
export function waitingBody(e: WaitingOnHuman, slug: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: 'todo.waiting_on_human',
    todo_id: e.todoId,
    queue: e.queue,
    summary: cut(e.title, SUMMARY_CHARS),
    endpoint: slug,
    question: cut(e.question, QUESTION_CHARS),
    choices: e.choices?.map((c) => cut(c, CHOICE_CHARS)) ?? null,
    asked_at: e.askedAt.toISOString(),
    expires_at: e.expiresAt.toISOString(),
  };
  if (Buffer.byteLength(JSON.stringify(body)) > MAX_BODY_BYTES - 32) body.choices = null;
  return body;
}

export class NotifyHooks {
  constructor(
    private readonly deps: {
      db: Pool;
      log: Logger;
      delivery: HookDelivery;
      /** Whether a queue's work may be pushed now (admission); default isPushEligible. */
      eligible?: typeof isPushEligible;
    },
  ) {}

  listen(bus: Bus): () => void {
    return bus.subscribe('todo_ready', (e) => {
      void this.ready(e.endpoint_id, e.queue);
    });
  }

  /** Ready transitions on a queue: claim this instance's share and queue their notifications. */
  async ready(endpointId: string, queue: string): Promise<number> {
    let queued = 0;
    try {
      // A deferred queue's transitions are left undecided: the admission reopen's
      // todo_ready announces them when the budget admits work again (docs/design/admission.md).
      if (!(await (this.deps.eligible ?? isPushEligible)(this.deps.db, endpointId, queue))) return 0;
      for (;;) {
        const todos = await claimReadyTransitions(this.deps.db, {
          endpointId,
          queue,
          limit: BATCH,
          maxAgeSeconds: MAX_AGE_SECONDS,
        });
        if (todos.length > 0) {
          const hooks = await enabledHooks(this.deps.db, endpointId);
          for (const todo of todos) queued += this.fan(endpointId, todo, hooks);
        }
        if (todos.length < BATCH) return queued;
      }
    } catch (err) {
      this.deps.log.error({ err, endpoint: endpointId }, 'notify hook pass failed');
      return queued;
    }
  }

  /** The hook sweep: ready transitions whose todo_ready notice was lost. */
  async sweep(): Promise<{ queued: number }> {
    let queued = 0;
    const pairs = await queuesWithUndecided(this.deps.db, {
      limit: SWEEP_PAIRS,
      minAgeSeconds: NOTICE_GRACE_SECONDS,
      maxAgeSeconds: MAX_AGE_SECONDS,
    });
    for (const pair of pairs) queued += await this.ready(pair.endpoint_id, pair.queue);
    return { queued };
  }

  private fan(endpointId: string, todo: ReadyTransition, hooks: HookTargetRow[]): number {
    let queued = 0;
    for (const hook of hooks) {
      if (hook.queues.length > 0 && !hook.queues.includes(todo.queue)) continue;
      if (hook.created_at > todo.updated_at) continue;
      if (hook.presence_seen === 'out' && !hook.ignore_presence) continue;
      const job = {
        endpointId,
        hookId: hook.id,
        messageId: `msg_${ulid()}`,
        type: 'todo.ready' as const,
        traceparent: todo.traceparent,
      };
      if (this.deps.delivery.enqueue({ ...job, body: readyBody(todo, hook.slug) })) queued += 1;
    }
    return queued;
  }

  /**
   * An agent parked a todo on a question (docs/design/ask-human.md): one
   * `todo.waiting_on_human` per matching enabled hook, from the instance that took the
   * ask, so each is sent once. Presence does not hold it back: the question is for the
   * owner, not the agents. Catches everything: the ask has committed, a hint may be lost.
   */
  async waitingOnHuman(event: WaitingOnHuman): Promise<number> {
    try {
      const hooks = await enabledHooks(this.deps.db, event.endpointId);
      let queued = 0;
      for (const hook of hooks) {
        if (hook.queues.length > 0 && !hook.queues.includes(event.queue)) continue;
        const job = {
          endpointId: event.endpointId,
          hookId: hook.id,
          messageId: `msg_${ulid()}`,
          type: 'todo.waiting_on_human' as const,
          traceparent: event.traceparent,
          body: waitingBody(event, hook.slug),
        };
        if (this.deps.delivery.enqueue(job)) queued += 1;
      }
      return queued;
    } catch (err) {
      this.deps.log.error({ err, endpoint: event.endpointId }, 'notify hook waiting_on_human failed');
      return 0;
    }
  }

  /** The digest's hook delivery: one `todos.backlog` per matching enabled hook. */
  async backlog(endpointId: string, summary: BacklogSummary): Promise<number> {
    const hooks = await enabledHooks(this.deps.db, endpointId);
    let queued = 0;
    for (const hook of hooks) {
      const queues = hook.queues.length > 0 ? summary.queues.filter((q) => hook.queues.includes(q)) : summary.queues;
      if (queues.length === 0) continue;
      const body = {
        type: 'todos.backlog',
        reason: summary.reason,
        endpoint: summary.slug,
        pending: summary.pending,
        queues,
        oldest_pending_seconds: summary.oldestPendingSeconds,
        created_at: new Date().toISOString(),
      };
      const job = { endpointId, hookId: hook.id, messageId: `msg_${ulid()}`, type: 'todos.backlog' as const, body };
      if (this.deps.delivery.enqueue(job)) queued += 1;
    }
    return queued;
  }
}
