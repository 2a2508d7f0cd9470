// One accepted delivery (or replay) written down: its todo, its dedup id and its event
// row in one transaction, so neither ever exists without the other (docs/design/intake.md,
// "The event history"). A redelivery rolls the transaction back and answers the todo and
// event its first delivery made.

import type { Queryable } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import { newId } from '../domain/ids.js';
import type { Metrics } from '../metrics/index.js';
import type { QuotaDeps } from '../quotas/check.js';
import { insertEvent } from '../store/webhook-events.js';
import { claimDelivery, touchWebhook } from '../store/webhooks.js';
import { createTodo, type TodoDeps } from '../todos/index.js';
import type { Tracing } from '../tracing/index.js';

/** What a delivery makes, read from its headers and body as its provider sends them. */
export interface Reading {
  kind: string | null;
  title: string;
  actor: string | null;
  payload: unknown;
  deliveryId: string | null;
}

/** A delivery's answer (the contract of docs/design/intake.md, "A delivery's answer"). */
export interface Made {
  todos: { id: string; queue: string; created: boolean }[];
  created: boolean;
  duplicate?: true;
  /** Null only for a redelivery of a delivery recorded before the event history existed. */
  event_id: string | null;
  todo_id: string;
}

export interface RecordDeps extends QuotaDeps {
  /** A pool (the delivery gets its own transaction) or a transaction's client (a savepoint in it). */
  db: Queryable;
  defaultLeaseSeconds: number;
  idempotencyWindowSeconds?: number;
  metrics?: Metrics;
  tracing?: Tracing;
}

export interface RecordArgs {
  webhook: { id: string | null; endpoint_id: string; queue: string; provider: string };
  reading: Reading;
  priority: number | undefined;
  verified: boolean;
  contentType: string | null;
  headers: Record<string, string>;
  payload: unknown;
  /** A delivery claims its id (a redelivery answers duplicate); a replay does not. */
  dedup: boolean;
  replayOf: string | null;
}

class Redelivered extends Error {
  constructor(readonly earlier: { todo_id: string; event_id: string | null }) {
    super('redelivered');
  }
}

export async function recordEvent(deps: RecordDeps, a: RecordArgs): Promise<Made> {
  const eventId = newId('ev');
  const { webhook, reading } = a;
  const input = {
    queue: webhook.queue,
    title: reading.title,
    payload: reading.payload,
    source: 'webhook',
    ...(reading.kind === null ? {} : { kind: reading.kind }),
    ...(a.priority === undefined ? {} : { priority: a.priority }),
  };
  try {
    const todo = await inTransaction(deps.db, async (tx) => {
      const todoDeps: TodoDeps = {
        db: tx,
        defaultLeaseSeconds: deps.defaultLeaseSeconds,
        ...(deps.quotas ? { quotas: deps.quotas } : {}),
        ...(deps.tracing ? { tracing: deps.tracing } : {}),
      };
      if (deps.idempotencyWindowSeconds !== undefined)
        todoDeps.idempotencyWindowSeconds = deps.idempotencyWindowSeconds;
      const sender = { webhookId: webhook.id ?? 'deleted', eventId };
      const { todo } = await createTodo(todoDeps, { endpointId: webhook.endpoint_id }, sender, input);
      if (a.dedup && reading.deliveryId !== null && webhook.id !== null) {
        const earlier = await claimDelivery(tx, {
          endpointId: webhook.endpoint_id,
          webhookId: webhook.id,
          deliveryId: reading.deliveryId,
          todoId: todo.id,
          eventId,
        });
        if (earlier) throw new Redelivered(earlier);
      }
      await insertEvent(tx, {
        endpointId: webhook.endpoint_id,
        id: eventId,
        webhookId: webhook.id,
        provider: webhook.provider,
        queue: webhook.queue,
        eventType: reading.kind,
        deliveryId: reading.deliveryId,
        actor: reading.actor,
        verified: a.verified,
        contentType: a.contentType,
        headers: a.headers,
        payload: a.payload,
        todoIds: [todo.id],
        trace: [{ step: 'route', rule: 'default', action: 'queue', queue: webhook.queue, todo_id: todo.id }],
        replayOf: a.replayOf,
      });
      if (webhook.id !== null) await touchWebhook(tx, webhook.endpoint_id, webhook.id);
      return todo;
    });
    deps.metrics?.todosCreated.inc();
    return {
      todos: [{ id: todo.id, queue: todo.queue, created: true }],
      created: true,
      event_id: eventId,
      todo_id: todo.id,
    };
  } catch (err) {
    if (!(err instanceof Redelivered)) throw err;
    const { todo_id, event_id } = err.earlier;
    return {
      todos: [{ id: todo_id, queue: webhook.queue, created: false }],
      created: false,
      duplicate: true,
      event_id,
      todo_id,
    };
  }
}
