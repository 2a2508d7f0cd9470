// Work orders (docs/design/routing.md, "Work orders"): a key per webhook that lets one
// event make its todos and records every later one with the same key as `duplicate`
// while it holds. Claimed in the event's own transaction, so racing events queue on the
// first one's uncommitted row and see it once it commits.

import type { Queryable } from '../db/pool.js';
import { deleted, type PruneArgs } from './retention.js';

/**
 * Takes the key for this event, or answers the event that holds it. An expired key is
 * taken over (the upsert's WHERE). Two statements, as claimDelivery: when a racing event
 * committed the key first, the upsert waits, does nothing, and only a fresh statement sees
 * the holder.
 */
export async function claimWorkOrder(
  db: Queryable,
  a: { endpointId: string; webhookId: string; key: string; eventId: string; holdSeconds: number },
): Promise<{ event_id: string } | null> {
  const key = [a.endpointId, a.webhookId, a.key];
  const taken = await db.query(
    `INSERT INTO webhook_work_orders AS o (endpoint_id, webhook_id, key, event_id, expires_at)
     VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5))
     ON CONFLICT (endpoint_id, webhook_id, key) DO UPDATE
       SET event_id = excluded.event_id, expires_at = excluded.expires_at
       WHERE o.expires_at <= now()`,
    [...key, a.eventId, a.holdSeconds],
  );
  if (taken.rowCount === 1) return null;
  const holder = await db.query<{ event_id: string }>(
    'SELECT event_id FROM webhook_work_orders WHERE endpoint_id = $1 AND webhook_id = $2 AND key = $3',
    key,
  );
  return holder.rows[0] ?? { event_id: 'unknown' };
}

/** The event holding a live key, or null: what the dry run reports as a duplicate. */
export async function heldWorkOrder(
  db: Queryable,
  a: { endpointId: string; webhookId: string; key: string },
): Promise<string | null> {
  const res = await db.query<{ event_id: string }>(
    `SELECT event_id FROM webhook_work_orders
      WHERE endpoint_id = $1 AND webhook_id = $2 AND key = $3 AND expires_at > now()`,
    [a.endpointId, a.webhookId, a.key],
  );
  return res.rows[0]?.event_id ?? null;
}

/** Keys expired for longer than the cutoff (webhook_work_orders_age_idx). */
export function pruneWorkOrders(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT endpoint_id, webhook_id, key FROM webhook_work_orders
        WHERE expires_at < now() - make_interval(secs => $1)
        ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM webhook_work_orders o USING old
      WHERE o.endpoint_id = old.endpoint_id AND o.webhook_id = old.webhook_id AND o.key = old.key`,
    a,
  );
}
