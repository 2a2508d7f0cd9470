// Token webhooks: an unguessable URL that turns a JSON POST into a todo on one queue of
// one endpoint. Managed by the endpoint's owner; the ingest lookup is by token hash.

import type { Queryable } from '../db/pool.js';

export interface Webhook {
  id: string;
  endpoint_id: string;
  name: string;
  queue: string;
  created_at: Date;
  rotated_at: Date | null;
  last_delivery_at: Date | null;
}

const COLUMNS = 'w.id, w.endpoint_id, w.name, w.queue, w.created_at, w.rotated_at, w.last_delivery_at';

export async function insertWebhook(
  db: Queryable,
  a: { id: string; endpointId: string; name: string; queue: string; tokenHash: Buffer },
): Promise<Webhook> {
  const res = await db.query<Webhook>(
    `INSERT INTO webhooks AS w (endpoint_id, id, name, queue, token_hash) VALUES ($1, $2, $3, $4, $5)
     RETURNING ${COLUMNS}`,
    [a.endpointId, a.id, a.name, a.queue, a.tokenHash],
  );
  return res.rows[0] as Webhook;
}

export async function listWebhooks(db: Queryable, endpointId: string): Promise<Webhook[]> {
  const res = await db.query<Webhook>(
    `SELECT ${COLUMNS} FROM webhooks w WHERE w.endpoint_id = $1 ORDER BY w.created_at, w.id`,
    [endpointId],
  );
  return res.rows;
}

/** Swaps the token of one of this human's webhooks: the old URL stops at once. */
export async function rotateWebhook(
  db: Queryable,
  humanId: string,
  id: string,
  tokenHash: Buffer,
): Promise<Webhook | null> {
  const res = await db.query<Webhook>(
    `UPDATE webhooks w SET token_hash = $3, rotated_at = now()
       FROM endpoints e WHERE e.id = w.endpoint_id AND e.human_id = $1 AND w.id = $2
     RETURNING ${COLUMNS}`,
    [humanId, id, tokenHash],
  );
  return res.rows[0] ?? null;
}

export async function deleteWebhook(db: Queryable, humanId: string, id: string): Promise<boolean> {
  const res = await db.query(
    `DELETE FROM webhooks w USING endpoints e WHERE e.id = w.endpoint_id AND e.human_id = $1 AND w.id = $2`,
    [humanId, id],
  );
  return res.rowCount === 1;
}

/** The webhook for an ingest token, only while its endpoint is live. */
export async function webhookForToken(db: Queryable, tokenHash: Buffer): Promise<Webhook | null> {
  const res = await db.query<Webhook>(
    `SELECT ${COLUMNS} FROM webhooks w JOIN endpoints e ON e.id = w.endpoint_id
      WHERE w.token_hash = $1 AND e.revoked_at IS NULL AND (e.expires_at IS NULL OR e.expires_at > now())`,
    [tokenHash],
  );
  return res.rows[0] ?? null;
}

/**
 * Records a delivery id; returns the todo id of an earlier delivery with the same id, or
 * null when this one is new (the caller then creates the todo in the same transaction).
 * Two statements on purpose: when a concurrent delivery of the same id commits first, the
 * insert waits for it and does nothing, and only a fresh statement can see its row.
 */
export async function claimDelivery(
  db: Queryable,
  a: { endpointId: string; webhookId: string; deliveryId: string; todoId: string },
): Promise<string | null> {
  const key = [a.endpointId, a.webhookId, a.deliveryId];
  const inserted = await db.query(
    `INSERT INTO webhook_deliveries (endpoint_id, webhook_id, delivery_id, todo_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT DO NOTHING`,
    [...key, a.todoId],
  );
  if (inserted.rowCount === 1) return null;
  const earlier = await db.query<{ todo_id: string }>(
    'SELECT todo_id FROM webhook_deliveries WHERE endpoint_id = $1 AND webhook_id = $2 AND delivery_id = $3',
    key,
  );
  return earlier.rows[0]?.todo_id ?? null;
}

export async function touchWebhook(db: Queryable, endpointId: string, id: string): Promise<void> {
  await db.query('UPDATE webhooks SET last_delivery_at = now() WHERE endpoint_id = $1 AND id = $2', [endpointId, id]);
}
