// The event history (docs/design/intake.md, "The event history"): one row per accepted
// webhook delivery and per replay, written in the transaction that made its todos. Reads
// are scoped by the endpoint's owner; the prunes act for the server, like every sweep.

import type { Queryable } from '../db/pool.js';
import type { PruneArgs } from './retention.js';
import { ownerOf, type WebhookOwner } from './webhooks.js';

/** An event as lists show it. */
export interface EventSummary {
  id: string;
  endpoint_id: string;
  webhook_id: string | null;
  provider: string;
  queue: string;
  type: string | null;
  actor: string | null;
  delivery_id: string | null;
  verified: boolean;
  disposition: string;
  todo_ids: string[];
  replay_of: string | null;
  received_at: Date;
}

/** An event with what was stored of the delivery. */
export interface EventDetail extends EventSummary {
  content_type: string | null;
  headers: Record<string, string>;
  payload: unknown;
  trace: unknown;
}

const SUMMARY = `v.id, v.endpoint_id, v.webhook_id, v.provider, v.queue, v.event_type AS type, v.actor, v.delivery_id,
  v.verified, v.disposition, v.todo_ids, v.replay_of, v.received_at`;
const DETAIL = `${SUMMARY}, v.content_type, v.headers, v.payload, v.trace`;

export interface InsertEventArgs {
  endpointId: string;
  id: string;
  webhookId: string | null;
  provider: string;
  queue: string;
  eventType: string | null;
  deliveryId: string | null;
  actor: string | null;
  verified: boolean;
  contentType: string | null;
  headers: Record<string, string>;
  payload: unknown;
  todoIds: string[];
  trace: unknown;
  replayOf: string | null;
  /** What routing did: routed, duplicate, dropped, quarantined or faulted (docs/design/routing.md). */
  disposition: string;
}

export async function insertEvent(db: Queryable, a: InsertEventArgs): Promise<EventSummary> {
  const res = await db.query<EventSummary>(
    `INSERT INTO webhook_events AS v (endpoint_id, id, webhook_id, provider, queue, event_type, delivery_id, actor,
       verified, content_type, headers, payload, todo_ids, trace, replay_of, disposition)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12::jsonb, $13::text[], $14::jsonb, $15, $16)
     RETURNING ${SUMMARY}`,
    [
      a.endpointId,
      a.id,
      a.webhookId,
      a.provider,
      a.queue,
      a.eventType,
      a.deliveryId,
      a.actor,
      a.verified,
      a.contentType,
      JSON.stringify(a.headers),
      a.payload === undefined ? null : JSON.stringify(a.payload),
      a.todoIds,
      JSON.stringify(a.trace),
      a.replayOf,
      a.disposition,
    ],
  );
  return res.rows[0] as EventSummary;
}

/** An endpoint's latest events, newest first (webhook_events_recent_idx). */
export async function listEvents(db: Queryable, endpointId: string, limit: number): Promise<EventSummary[]> {
  const res = await db.query<EventSummary>(
    `SELECT ${SUMMARY} FROM webhook_events v WHERE v.endpoint_id = $1
      ORDER BY v.received_at DESC, v.id DESC LIMIT $2`,
    [endpointId, limit],
  );
  return res.rows;
}

/** One event of this owner's (webhook_events_id_idx), or null: another's answers alike. */
export async function eventOf(
  db: Queryable,
  owner: WebhookOwner,
  id: string,
): Promise<(EventDetail & { human_id: string }) | null> {
  const o = ownerOf(owner);
  const res = await db.query<EventDetail & { human_id: string }>(
    `SELECT ${DETAIL}, e.human_id FROM webhook_events v JOIN endpoints e ON e.id = v.endpoint_id
      WHERE v.id = $2 AND ${o.where}`,
    [o.param, id],
  );
  return res.rows[0] ?? null;
}

/** Events received before the cutoff (webhook_events_age_idx). */
export async function pruneEvents(db: Queryable, a: PruneArgs): Promise<number> {
  const res = await db.query(
    `WITH old AS (
       SELECT endpoint_id, id FROM webhook_events
        WHERE received_at < now() - make_interval(secs => $1)
        ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM webhook_events v USING old WHERE v.endpoint_id = old.endpoint_id AND v.id = old.id`,
    [a.olderThanSeconds, a.limit],
  );
  return res.rowCount ?? 0;
}

/** Endpoints that received events in the last `seconds` (webhook_events_age_idx: the recent rows only). */
export async function recentEventEndpoints(db: Queryable, seconds: number): Promise<string[]> {
  const res = await db.query<{ endpoint_id: string }>(
    `SELECT DISTINCT endpoint_id FROM webhook_events WHERE received_at > now() - make_interval(secs => $1)`,
    [seconds],
  );
  return res.rows.map((r) => r.endpoint_id);
}

/**
 * Deletes up to `limit` of an endpoint's events older than its newest `keep`
 * (webhook_events_recent_idx: it steps over `keep` index entries, then deletes).
 */
export async function trimEvents(
  db: Queryable,
  a: { endpointId: string; keep: number; limit: number },
): Promise<number> {
  const res = await db.query(
    `WITH old AS (
       SELECT endpoint_id, id FROM webhook_events WHERE endpoint_id = $1
        ORDER BY received_at DESC, id DESC OFFSET $2 LIMIT $3 FOR UPDATE SKIP LOCKED)
     DELETE FROM webhook_events v USING old WHERE v.endpoint_id = old.endpoint_id AND v.id = old.id`,
    [a.endpointId, a.keep, a.limit],
  );
  return res.rowCount ?? 0;
}

/** Adds a release's todos and trace steps to the event it released (docs/design/routing.md, "Release"). */
export async function appendToEvent(
  db: Queryable,
  a: { endpointId: string; id: string; todoIds: string[]; trace: unknown[] },
): Promise<void> {
  await db.query(
    `UPDATE webhook_events SET todo_ids = todo_ids || $3::text[], trace = trace || $4::jsonb
      WHERE endpoint_id = $1 AND id = $2`,
    [a.endpointId, a.id, a.todoIds, JSON.stringify(a.trace)],
  );
}

/**
 * The trace steps of the event a todo came from that concern that todo, in order: the
 * rule that matched (its name and position), its decision, the trust and work-order
 * steps, a release, and this todo's own route step (not the other targets').
 */
export async function routeOfTodo(
  db: Queryable,
  a: { eventId: string; todoId: string },
): Promise<{ event_id: string; disposition: string; steps: unknown[] } | null> {
  const res = await db.query<{ event_id: string; disposition: string; steps: unknown[] | null }>(
    `SELECT v.id AS event_id, v.disposition,
            (SELECT jsonb_agg(t.s ORDER BY t.n) FROM jsonb_array_elements(v.trace) WITH ORDINALITY AS t(s, n)
              WHERE t.s->>'step' IN ('decide', 'trust', 'once', 'release') OR t.s->>'todo_id' = $2
                 OR (t.s->>'step' = 'rule' AND t.s->'matched' = 'true'::jsonb)) AS steps
       FROM webhook_events v WHERE v.id = $1 AND $2 = ANY(v.todo_ids)`,
    [a.eventId, a.todoId],
  );
  const row = res.rows[0];
  return row ? { event_id: row.event_id, disposition: row.disposition, steps: row.steps ?? [] } : null;
}

/** A webhook's latest events with what was stored of them, newest first: the dry run's deliveries (webhook_events_webhook_idx). */
export async function recentWebhookEvents(
  db: Queryable,
  a: { endpointId: string; webhookId: string; limit: number },
): Promise<EventDetail[]> {
  const res = await db.query<EventDetail>(
    `SELECT ${DETAIL} FROM webhook_events v
      WHERE v.endpoint_id = $1 AND v.webhook_id = $2 AND v.replay_of IS NULL
      ORDER BY v.received_at DESC, v.id DESC LIMIT $3`,
    [a.endpointId, a.webhookId, a.limit],
  );
  return res.rows;
}
