// Doorbell ring records (doorbell_rings, docs/design/doorbell-acknowledgement.md): one
// row per successful write, the acknowledgement a claim or ack_doorbell writes on any
// instance, the unheard sweep, the per-session unheard mark and the prune
// (SWITCHBOARD_DOORBELL_RETENTION). The ring states are written down in
// migrations/0006_doorbell_ack.sql; every statement here moves a row out of `open` only
// under the predicate `acked_at IS NULL AND unheard_at IS NULL`, so a claim and the sweep
// racing on one row serialise on its lock and exactly one decides its state.

import type { Queryable } from '../db/pool.js';
import type { PruneArgs } from './retention.js';

export type RingKind = 'todo' | 'digest' | 'test';

export interface RingRecord {
  id: string;
  endpointId: string;
  sessionId: string;
  todoId: string | null;
  kind: RingKind;
  queue: string | null;
  synthetic: boolean;
  /** Milliseconds between the write and this insert: sent_at is the database's now() minus it. */
  ageMs: number;
  /** The todo's claim count when it was rung: an attempt with a higher seq was claimed after the ring. */
  claimsBefore: number;
}

/** A ring that left `open` (or was inserted already acknowledged), for the counters. */
export interface RingOutcome {
  kind: RingKind;
  synthetic: boolean;
  /** true: acknowledged in the window (counts); false: a late ack on an unheard ring (does not). */
  in_window: boolean;
  /**
   * A todo ring acknowledged by a claim: acked_at - sent_at in seconds, for
   * switchboard_doorbell_delivery_seconds (0024_claim_ack_delivery.sql); null for a digest,
   * absent where no claim acknowledged it.
   */
  delivery_seconds?: number | null;
}

/**
 * A ring row inserted already acknowledged by the claim that took its todo: its endpoint's
 * slug and its queue (the histogram's labels) and acked_at - sent_at. Null when it was
 * inserted open, or is a digest.
 */
export interface InsertedDelivery {
  endpoint_slug: string;
  queue: string;
  delivery_seconds: number;
}

/**
 * Inserts ring rows in one statement. A ring whose todo was claimed between the write and
 * this insert (the writer is asynchronous) is inserted already acknowledged by that claim
 * (an attempt whose seq is above the todo's claim count at ring time), so a fast agent is
 * never recorded as deaf. Returns what was inserted.
 */
export async function insertRings(
  db: Queryable,
  rows: RingRecord[],
): Promise<Array<RingOutcome & { acked: boolean; delivery: InsertedDelivery | null }>> {
  if (rows.length === 0) return [];
  const col = <K extends keyof RingRecord>(k: K) => rows.map((r) => r[k]);
  const res = await db.query<RingOutcome & { acked: boolean; delivery: InsertedDelivery | null }>(
    `WITH r AS (
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::boolean[],
                            $8::float8[], $9::int[])
         AS r(id, endpoint_id, session_id, todo_id, kind, queue, synthetic, age_ms, claims_before)),
     timed AS (SELECT r.*, now() - make_interval(secs => r.age_ms / 1000) AS sent_at FROM r),
     ins AS (
       INSERT INTO doorbell_rings (endpoint_id, id, session_id, todo_id, kind, queue, synthetic, sent_at,
                                   acked_at, ack_via, acked_session_id)
       SELECT t.endpoint_id, t.id, t.session_id, t.todo_id, t.kind, t.queue, t.synthetic, t.sent_at,
              a.claimed_at, CASE WHEN a.claimed_at IS NOT NULL THEN 'claim' END, a.session_id
         FROM timed t
         LEFT JOIN LATERAL (
           SELECT claimed_at, session_id FROM todo_attempts
            WHERE endpoint_id = t.endpoint_id AND todo_id = t.todo_id AND seq > t.claims_before
            ORDER BY seq LIMIT 1) a ON t.todo_id IS NOT NULL
       ON CONFLICT DO NOTHING
       RETURNING endpoint_id, kind, synthetic, queue, acked_at IS NOT NULL AS acked, sent_at, acked_at)
     SELECT kind, synthetic, acked, true AS in_window,
            CASE WHEN acked AND kind = 'todo' THEN jsonb_build_object(
              'endpoint_slug', (SELECT e.slug FROM endpoints e WHERE e.id = ins.endpoint_id), 'queue', queue,
              'delivery_seconds', greatest(extract(epoch FROM acked_at - sent_at), 0)::float8) END AS delivery
       FROM ins`,
    [
      col('id'),
      col('endpointId'),
      col('sessionId'),
      col('todoId'),
      col('kind'),
      col('queue'),
      col('synthetic'),
      col('ageMs'),
      col('claimsBefore'),
    ],
  );
  return res.rows;
}

/**
 * The self-test claim's acknowledgement, run inside its transaction (every other claim
 * acknowledges in its own statement, src/store/claims.ts): ack_rings_of_claim()
 * (0010_claim_ack.sql) on the claimed todo's open rings and the endpoint's open digests.
 */
export async function ackRingsForClaim(
  tx: Queryable,
  a: { endpointId: string; todoId: string; sessionId: string },
): Promise<RingOutcome[]> {
  const res = await tx.query<{ rings: RingOutcome[] | null }>({
    name: 'ack_rings_for_claim',
    text: 'SELECT ack_rings_of_claim($1, $2, $3) AS rings',
    values: [a.endpointId, a.todoId, a.sessionId],
  });
  return res.rows[0]?.rings ?? [];
}

export type AckState = 'acknowledged' | 'acknowledged_late' | 'already_acknowledged';

/**
 * ack_doorbell: acknowledges one ring of this endpoint, clears the rung session's unheard
 * mark and answers its ring (the session may be rung again, "Who is rung" in
 * docs/design/doorbell-acknowledgement.md). Idempotent: a ring acknowledged before answers
 * `already_acknowledged` and changes nothing. Null: no such ring here.
 */
export async function ackRing(
  db: Queryable,
  a: { endpointId: string; ringId: string; sessionId: string },
): Promise<{ outcome: RingOutcome | null; state: AckState } | null> {
  const res = await db.query<RingOutcome & { state: AckState | null }>(
    `WITH acked AS (
       UPDATE doorbell_rings SET acked_at = now(), ack_via = 'ack', acked_session_id = $3
        WHERE endpoint_id = $1 AND id = $2 AND acked_at IS NULL
       RETURNING kind, synthetic, session_id, (unheard_at IS NULL) AS in_window),
     cleared AS (
       UPDATE mcp_sessions s SET unheard = false, ring_todo_id = NULL
        WHERE s.endpoint_id = $1 AND (s.unheard OR s.ring_todo_id IS NOT NULL)
          AND s.id IN (SELECT session_id FROM acked))
     SELECT kind, synthetic, in_window,
            CASE WHEN in_window THEN 'acknowledged' ELSE 'acknowledged_late' END AS state FROM acked
     UNION ALL
     SELECT kind, synthetic, false, 'already_acknowledged' FROM doorbell_rings
      WHERE endpoint_id = $1 AND id = $2 AND NOT EXISTS (SELECT 1 FROM acked)`,
    [a.endpointId, a.ringId, a.sessionId],
  );
  const row = res.rows[0];
  if (!row) return null;
  const { state, ...outcome } = row;
  return { outcome: state === 'already_acknowledged' ? null : outcome, state: state ?? 'already_acknowledged' };
}

/**
 * The unheard sweep: open rings older than the window become unheard. SKIP LOCKED leaves a
 * row a claim holds to that claim; taking the row lock re-evaluates the batch's condition on
 * the newest version of the row, so a ring acked before the lock drops out of the batch, and
 * once locked nothing acks it before the UPDATE. The UPDATE therefore joins the batch by key
 * alone: repeating the open-ring condition there matched the open-age index's predicate, and
 * on a just-rung table's stale statistics the planner walked that index once per ring of the
 * batch instead of probing the primary key (docs/design/scale.md, "A pushed backlog").
 * Returns the rings marked.
 */
export async function markUnheardRings(
  db: Queryable,
  a: { windowSeconds: number; limit: number },
): Promise<Array<{ endpoint_id: string; session_id: string; kind: RingKind; synthetic: boolean }>> {
  const res = await db.query<{ endpoint_id: string; session_id: string; kind: RingKind; synthetic: boolean }>(
    `WITH due AS (
       SELECT endpoint_id, id FROM doorbell_rings
        WHERE acked_at IS NULL AND unheard_at IS NULL AND sent_at <= now() - make_interval(secs => $1)
        ORDER BY sent_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     UPDATE doorbell_rings r SET unheard_at = now() FROM due
      WHERE r.endpoint_id = due.endpoint_id AND r.id = due.id
     RETURNING r.endpoint_id, r.session_id, r.kind, r.synthetic`,
    [a.windowSeconds, a.limit],
  );
  return res.rows;
}

/** How many of a session's latest rings, all unheard and never acknowledged, mark it unheard. */
export const UNHEARD_MARK_RINGS = 3;

/**
 * Marks the given live sessions unheard when their last 3 rings all went unheard with no
 * ack in between. Returns the sessions that were not marked before (for the warning).
 */
export async function markUnheardSessions(
  db: Queryable,
  sessions: Array<{ endpoint_id: string; session_id: string }>,
): Promise<Array<{ endpoint_id: string; id: string; client_name: string | null }>> {
  if (sessions.length === 0) return [];
  const res = await db.query<{ endpoint_id: string; id: string; client_name: string | null }>(
    `UPDATE mcp_sessions s SET unheard = true
       FROM unnest($1::text[], $2::text[]) AS c(endpoint_id, session_id)
      WHERE s.endpoint_id = c.endpoint_id AND s.id = c.session_id AND NOT s.unheard AND s.closed_at IS NULL
        AND (SELECT count(*) FILTER (WHERE l.unheard_at IS NOT NULL AND l.acked_at IS NULL) FROM (
               SELECT unheard_at, acked_at FROM doorbell_rings d
                WHERE d.endpoint_id = s.endpoint_id AND d.session_id = s.id
                ORDER BY d.sent_at DESC LIMIT $3) l) = $3
     RETURNING s.endpoint_id, s.id, s.client_name`,
    [sessions.map((x) => x.endpoint_id), sessions.map((x) => x.session_id), UNHEARD_MARK_RINGS],
  );
  return res.rows;
}

/** One ring of this endpoint, for the self-test report; null when it is not this endpoint's. */
export async function getRing(
  db: Queryable,
  endpointId: string,
  id: string,
): Promise<{ id: string; session_id: string; sent_at: Date; acked_at: Date | null; unheard_at: Date | null } | null> {
  const res = await db.query<{
    id: string;
    session_id: string;
    sent_at: Date;
    acked_at: Date | null;
    unheard_at: Date | null;
  }>(`SELECT id, session_id, sent_at, acked_at, unheard_at FROM doorbell_rings WHERE endpoint_id = $1 AND id = $2`, [
    endpointId,
    id,
  ]);
  return res.rows[0] ?? null;
}

/**
 * Deletes one batch of rings sent before the cutoff, oldest first through idx_rings_sent.
 * A ring still open is left for the unheard sweep to decide (the retention floor is far
 * above the longest ack window, so one is open this old only while that sweep cannot run).
 */
export async function pruneRings(db: Queryable, a: PruneArgs): Promise<number> {
  const res = await db.query(
    `WITH old AS (
       SELECT endpoint_id, id FROM doorbell_rings
        WHERE sent_at < now() - make_interval(secs => $1) AND (acked_at IS NOT NULL OR unheard_at IS NOT NULL)
        ORDER BY sent_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM doorbell_rings r USING old WHERE r.endpoint_id = old.endpoint_id AND r.id = old.id`,
    [a.olderThanSeconds, a.limit],
  );
  return res.rowCount ?? 0;
}

/** Live sessions carrying the unheard mark (the switchboard_doorbell_unheard_sessions gauge). */
export async function countUnheardSessions(db: Queryable): Promise<number> {
  const res = await db.query<{ n: number }>(
    'SELECT count(*) AS n FROM mcp_sessions WHERE unheard AND closed_at IS NULL',
  );
  return res.rows[0]?.n ?? 0;
}
