// POST /webhooks/{token}: a JSON delivery becomes a todo on the webhook's queue. The
// title comes from the body's `title`, else a header, else a fixed default; the rest of
// the body is the payload. A delivery id (Idempotency-Key or X-Delivery-Id) is recorded
// in the same transaction as the todo, so a replay — even after the todo finished, even
// racing the original — makes no second todo.

import type { Pool } from '../db/pool.js';
import { withTx } from '../db/pool.js';
import { AppError, invalidArgument } from '../domain/errors.js';
import { hashSecret } from '../identity/secrets.js';
import { claimDelivery, touchWebhook, webhookForToken } from '../store/webhooks.js';
import { createTodo, type TodoDeps } from '../todos/index.js';
import type { Metrics } from '../metrics/index.js';

export interface Delivery {
  body: unknown;
  titleHeader: string | undefined;
  deliveryId: string | undefined;
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

export interface IngestDeps {
  pool: Pool;
  defaultLeaseSeconds: number;
  /** Counted after the delivery's transaction commits. */
  metrics?: Metrics;
}

export async function ingestDelivery(
  deps: IngestDeps,
  token: string,
  delivery: Delivery,
): Promise<{ todo_id: string; created: boolean }> {
  const webhook = await webhookForToken(deps.pool, hashSecret(token));
  if (!webhook) throw new AppError('not_found', 'no webhook answers at this URL (unknown, rotated or deleted)');
  if (delivery.deliveryId !== undefined && (delivery.deliveryId.length === 0 || delivery.deliveryId.length > 200)) {
    throw invalidArgument('Idempotency-Key', 'must be 1–200 characters');
  }
  const { title, payload } = splitBody(delivery.body, delivery.titleHeader);
  const input = { queue: webhook.queue, title, payload, source: 'webhook' };
  try {
    const { todo, created } = await withTx(deps.pool, async (tx) => {
      const todoDeps: TodoDeps = { db: tx, defaultLeaseSeconds: deps.defaultLeaseSeconds };
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
