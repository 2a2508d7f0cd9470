// Quarantine (docs/design/routing.md, "Trusted actors and quarantine"): events a rule
// would have routed, from an actor the webhook does not trust, held for a human. Not
// todos: nothing here is reachable from a claim, a todo list or read, or a long-poll.
// Reads are scoped by owner like the event history; the expiry and prune act for the
// server, like every sweep.

import type { Queryable } from '../db/pool.js';
import type { QuarantineState } from '../domain/routing.js';
import { deleted, type PruneArgs } from './retention.js';
import { ownerOf, type WebhookOwner } from './webhooks.js';

export interface QuarantineItem {
  id: string;
  endpoint_id: string;
  event_id: string;
  webhook_id: string | null;
  actor: string | null;
  reason: string;
  rule_id: string | null;
  /** What routing would have made: [{endpoint, queue, title, kind, …}]. */
  plan: unknown;
  state: QuarantineState;
  created_at: Date;
  resolved_at: Date | null;
  resolved_by: string | null;
  resolution: string | null;
  todo_ids: string[];
}

const COLUMNS = `q.id, q.endpoint_id, q.event_id, q.webhook_id, q.actor, q.reason, q.rule_id, q.plan, q.state,
  q.created_at, q.resolved_at, q.resolved_by, q.resolution, q.todo_ids`;

export async function insertQuarantine(
  db: Queryable,
  a: {
    endpointId: string;
    id: string;
    eventId: string;
    webhookId: string | null;
    actor: string | null;
    reason: string;
    ruleId: string | null;
    plan: unknown;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO quarantine_items (endpoint_id, id, event_id, webhook_id, actor, reason, rule_id, plan)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb)`,
    [a.endpointId, a.id, a.eventId, a.webhookId, a.actor, a.reason, a.ruleId, JSON.stringify(a.plan)],
  );
}

/** This owner's items, newest first; `state` narrows (held: quarantine_items_held_idx). */
export async function listQuarantine(
  db: Queryable,
  owner: WebhookOwner,
  a: { state: QuarantineState | null; limit: number },
): Promise<QuarantineItem[]> {
  const o = ownerOf(owner);
  const res = await db.query<QuarantineItem>(
    `SELECT ${COLUMNS} FROM quarantine_items q JOIN endpoints e ON e.id = q.endpoint_id
      WHERE ${o.where} AND ($2::text IS NULL OR q.state = $2)
      ORDER BY q.created_at DESC, q.id DESC LIMIT $3`,
    [o.param, a.state, a.limit],
  );
  return res.rows;
}

/**
 * One of this owner's items (quarantine_items_id_idx), with the event it holds: what
 * would have reached the agent. `lock` takes the row for a release or discard.
 */
export async function quarantineOf(
  db: Queryable,
  owner: WebhookOwner,
  id: string,
  lock = false,
): Promise<(QuarantineItem & { human_id: string }) | null> {
  const o = ownerOf(owner);
  const res = await db.query<QuarantineItem & { human_id: string }>(
    `SELECT ${COLUMNS}, e.human_id FROM quarantine_items q JOIN endpoints e ON e.id = q.endpoint_id
      WHERE q.id = $2 AND ${o.where}${lock ? ' FOR UPDATE OF q' : ''}`,
    [o.param, id],
  );
  return res.rows[0] ?? null;
}

/** Ends a held item: released (with the todos it made) or discarded (with why). */
export async function resolveQuarantine(
  db: Queryable,
  a: {
    endpointId: string;
    id: string;
    state: 'released' | 'discarded';
    by: string;
    resolution: string | null;
    todoIds: string[];
  },
): Promise<void> {
  await db.query(
    `UPDATE quarantine_items SET state = $3, resolved_at = now(), resolved_by = $4, resolution = $5, todo_ids = $6::text[]
      WHERE endpoint_id = $1 AND id = $2 AND state = 'held'`,
    [a.endpointId, a.id, a.state, a.by, a.resolution, a.todoIds],
  );
}

/** Held items older than the cutoff become `expired` (quarantine_items_age_idx), one batch. */
export function expireQuarantine(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT endpoint_id, id FROM quarantine_items
        WHERE state = 'held' AND created_at < now() - make_interval(secs => $1)
        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     UPDATE quarantine_items q SET state = 'expired', resolved_at = now(), resolution = 'not reviewed in time'
       FROM old WHERE q.endpoint_id = old.endpoint_id AND q.id = old.id`,
    a,
  );
}

/** Items resolved (or expired) before the cutoff are deleted, one batch. */
export function pruneQuarantine(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT endpoint_id, id FROM quarantine_items
        WHERE created_at < now() - make_interval(secs => $1) AND state <> 'held'
        ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM quarantine_items q USING old WHERE q.endpoint_id = old.endpoint_id AND q.id = old.id`,
    a,
  );
}
