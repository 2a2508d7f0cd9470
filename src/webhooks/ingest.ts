// POST /webhooks/{token}: a JSON delivery becomes a todo on the webhook's queue. The
// title comes from the body's `title`, else a header, else a fixed default; the rest of
// the body is the payload. A delivery id (the first of DELIVERY_ID_HEADERS present) is
// recorded in the same transaction as the todo, so a replay — even after the todo
// finished, even racing the original — makes no second todo.
// A priority rides in the Switchboard-Priority header or the `priority` query parameter
// (the body is the sender's payload).

import type { Tracing } from '../tracing/index.js';
import type { Pool } from '../db/pool.js';
import { withTx } from '../db/pool.js';
import { AppError, invalidArgument } from '../domain/errors.js';
import { PRIORITY_BOUNDS } from '../domain/todo.js';
import { hashSecret } from '../identity/secrets.js';
import { claimDelivery, touchWebhook, webhookForToken } from '../store/webhooks.js';
import { createTodo, type TodoDeps } from '../todos/index.js';
import type { QuotaDeps } from '../quotas/check.js';
import type { Metrics } from '../metrics/index.js';

export interface Delivery {
  body: unknown;
  titleHeader: string | undefined;
  deliveryId: string | undefined;
  /** The header the delivery id came from, named when it is refused. */
  deliveryIdHeader?: string;
  /** The todo's priority as the sender wrote it, and where (the header or the query parameter), to name it in an error. */
  priority?: { text: string; field: string } | undefined;
}

/**
 * Where a sender puts its delivery id, in order of precedence: an explicit
 * Idempotency-Key first (the caller chose it for this purpose), then the Standard
 * Webhooks message id, GitHub's delivery GUID (kept on a redelivery), and the generic
 * X-Delivery-Id. The first one present is the id; the others are ignored.
 */
export const DELIVERY_ID_HEADERS = ['Idempotency-Key', 'webhook-id', 'X-GitHub-Delivery', 'X-Delivery-Id'] as const;

/** The delivery id and its header, from a header reader taking lower-case names. */
export function deliveryIdOf(header: (name: string) => string | undefined): { id?: string; header?: string } {
  for (const name of DELIVERY_ID_HEADERS) {
    const id = header(name.toLowerCase());
    if (id !== undefined) return { id, header: name };
  }
  return {};
}

export const DEFAULT_TITLE = 'Webhook delivery';

class Replayed extends Error {
  constructor(readonly todoId: string) {
    super('replayed delivery');
  }
}

function splitBody(body: unknown, titleHeader: string | undefined): { title: string; payload: unknown } {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { title: titleHeader ?? DEFAULT_TITLE, payload: body };
  }
  const { title, ...rest } = body as Record<string, unknown>;
  if (title !== undefined && typeof title !== 'string') throw invalidArgument('title', 'must be a string');
  return { title: title ?? titleHeader ?? DEFAULT_TITLE, payload: rest };
}

/** A priority from a header or query parameter: an integer in PRIORITY_BOUNDS, else invalid_argument naming where it came from. */
function parsePriority(given: Delivery['priority']): number | undefined {
  if (given === undefined) return undefined;
  const n = /^[+-]?\d{1,4}$/.test(given.text.trim()) ? Number(given.text.trim()) : NaN;
  if (!Number.isInteger(n) || n < PRIORITY_BOUNDS.min || n > PRIORITY_BOUNDS.max) {
    throw invalidArgument(given.field, `must be an integer from ${PRIORITY_BOUNDS.min} to ${PRIORITY_BOUNDS.max}`);
  }
  return n;
}

export interface IngestDeps extends QuotaDeps {
  pool: Pool;
  defaultLeaseSeconds: number;
  /** SWITCHBOARD_IDEMPOTENCY_WINDOW in seconds; absent: the server default (todos/context.ts). */
  idempotencyWindowSeconds?: number;
  /** Counted after the delivery's transaction commits. */
  metrics?: Metrics;
  /** The todo stores the request's trace context (its `traceparent` header's trace). */
  tracing?: Tracing;
}

export async function ingestDelivery(
  deps: IngestDeps,
  token: string,
  delivery: Delivery,
): Promise<{ todo_id: string; created: boolean }> {
  const webhook = await webhookForToken(deps.pool, hashSecret(token));
  if (!webhook) throw new AppError('not_found', 'no webhook answers at this URL (unknown, rotated or deleted)');
  if (delivery.deliveryId !== undefined && (delivery.deliveryId.length === 0 || delivery.deliveryId.length > 200)) {
    throw invalidArgument(delivery.deliveryIdHeader ?? 'Idempotency-Key', 'must be 1–200 characters');
  }
  const priority = parsePriority(delivery.priority);
  const { title, payload } = splitBody(delivery.body, delivery.titleHeader);
  const input = {
    queue: webhook.queue,
    title,
    payload,
    source: 'webhook',
    ...(priority === undefined ? {} : { priority }),
  };
  try {
    const { todo, created } = await withTx(deps.pool, async (tx) => {
      const todoDeps: TodoDeps = {
        db: tx,
        defaultLeaseSeconds: deps.defaultLeaseSeconds,
        ...(deps.quotas ? { quotas: deps.quotas } : {}),
        ...(deps.tracing ? { tracing: deps.tracing } : {}),
      };
      if (deps.idempotencyWindowSeconds !== undefined)
        todoDeps.idempotencyWindowSeconds = deps.idempotencyWindowSeconds;
      const created = await createTodo(todoDeps, { endpointId: webhook.endpoint_id }, { webhookId: webhook.id }, input);
      if (delivery.deliveryId !== undefined) {
        const earlier = await claimDelivery(tx, {
          endpointId: webhook.endpoint_id,
          webhookId: webhook.id,
          deliveryId: delivery.deliveryId,
          todoId: created.todo.id,
        });
        if (earlier) throw new Replayed(earlier);
      }
      await touchWebhook(tx, webhook.endpoint_id, webhook.id);
      return created;
    });
    if (created) deps.metrics?.todosCreated.inc();
    return { todo_id: todo.id, created: true };
  } catch (err) {
    if (err instanceof Replayed) return { todo_id: err.todoId, created: false };
    throw err;
  }
}
