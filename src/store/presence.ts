// Presence columns of endpoints: the shift, the override, the last decided presence
// (presence_seen) and the digest due on a change to `in`. A change of presence_seen is a
// conditional UPDATE, and so is claiming a due digest, so each is decided once however
// many instances evaluate the same endpoint at the same time.

import { notifySql } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import { RING_READY, RUNG_AT } from './rings.js';
import { countSql } from './todo-counts.js';

export interface PresenceRow {
  id: string;
  slug: string;
  shift: string | null;
  presence_override: 'in' | 'out' | null;
  override_until: Date | null;
  override_by: string | null;
  presence_seen: 'in' | 'out';
}

const COLUMNS = 'e.id, e.slug, e.shift, e.presence_override, e.override_until, e.override_by, e.presence_seen';

/** One endpoint's presence columns; `lock` holds the row until the caller's transaction ends. */
export async function getPresenceRow(
  db: Queryable,
  endpointId: string,
  opts: { lock?: boolean } = {},
): Promise<{ row: PresenceRow; now: Date } | null> {
  const res = await db.query<PresenceRow & { now: Date }>(
    `SELECT ${COLUMNS}, now() AS now FROM endpoints e WHERE e.id = $1 AND e.revoked_at IS NULL
      ${opts.lock ? 'FOR NO KEY UPDATE' : ''}`,
    [endpointId],
  );
  const r = res.rows[0];
  if (!r) return null;
  const { now, ...row } = r;
  return { row, now };
}

/** Endpoints whose presence can change by itself or is out, and those owed a digest. */
export async function presenceCandidates(db: Queryable, limit: number): Promise<{ rows: PresenceRow[]; now: Date }> {
  const res = await db.query<PresenceRow & { now: Date }>(
    `SELECT ${COLUMNS}, now() AS now FROM endpoints e
      WHERE e.revoked_at IS NULL
        AND (e.shift IS NOT NULL OR e.presence_override IS NOT NULL OR e.presence_seen = 'out')
      ORDER BY e.id LIMIT $1`,
    [limit],
  );
  const now = res.rows[0]?.now ?? (await db.query<{ now: Date }>('SELECT now()')).rows[0]?.now ?? new Date();
  return { rows: res.rows.map(({ now: _n, ...row }) => row), now };
}

export async function endpointsOwedDigest(db: Queryable, limit: number): Promise<string[]> {
  const res = await db.query<{ id: string }>(
    `SELECT id FROM endpoints WHERE digest_due_at IS NOT NULL AND digest_due_at < now() - interval '2 seconds'
      ORDER BY digest_due_at LIMIT $1`,
    [limit],
  );
  return res.rows.map((r) => r.id);
}

export async function writeOverride(
  db: Queryable,
  a: { endpointId: string; presence: 'in' | 'out' | null; until: Date | null; by: string | null },
): Promise<void> {
  await db.query(`UPDATE endpoints SET presence_override = $2, override_until = $3, override_by = $4 WHERE id = $1`, [
    a.endpointId,
    a.presence,
    a.until,
    a.by,
  ]);
}

export async function writeShift(db: Queryable, endpointId: string, shift: string | null): Promise<void> {
  await db.query('UPDATE endpoints SET shift = $2 WHERE id = $1', [endpointId, shift]);
}

/**
 * Records a change of the effective presence; true for the one caller that changed it.
 * A change to `in` owes a digest (digest_due_at) and tells every instance (presence_in).
 */
export async function applyPresence(
  db: Queryable,
  a: { endpointId: string; presence: 'in' | 'out'; reason: string },
): Promise<boolean> {
  const res = await db.query(
    `WITH changed AS (
       UPDATE endpoints SET presence_seen = $2::text, presence_changed_at = now(),
         digest_due_at = CASE WHEN $2::text = 'in' THEN now() END,
         digest_reason = CASE WHEN $2::text = 'in' THEN $3::text END
       WHERE id = $1 AND presence_seen <> $2::text RETURNING id)
     SELECT id, CASE WHEN $2::text = 'in'
       THEN ${notifySql('presence_in', { endpoint_id: 'id' })} END
       FROM changed`,
    [a.endpointId, a.presence, a.reason],
  );
  return (res.rowCount ?? 0) > 0;
}

export interface DigestQueue {
  queue: string;
  pending: number;
  oldest_seconds: number;
}

/** Claims the endpoint's owed digest (once across instances) and counts its pending work by queue. */
export async function claimDigest(
  db: Queryable,
  endpointId: string,
): Promise<{ slug: string; reason: string; queues: DigestQueue[] } | null> {
  const res = await db.query<{ slug: string; reason: string | null; queues: DigestQueue[] }>(
    `WITH claimed AS (
       UPDATE endpoints SET digest_due_at = NULL
        WHERE id = $1 AND digest_due_at IS NOT NULL AND presence_seen = 'in' AND revoked_at IS NULL
       RETURNING id, slug, digest_reason, queues)
     SELECT c.slug, c.digest_reason AS reason, COALESCE((
       SELECT json_agg(json_build_object('queue', q.queue, 'pending', q.n, 'oldest_seconds', q.age) ORDER BY q.queue)
         FROM (SELECT g.queue, ${countSql('c.id', 'g.queue', `'pending'`)}::int AS n,
                      floor(extract(epoch FROM now() - h.ready_at))::int AS age
                 FROM unnest(c.queues) g(queue)
                 CROSS JOIN LATERAL (
                   SELECT t.ready_at FROM todos t
                    WHERE t.endpoint_id = c.id AND t.queue = g.queue AND t.ready_at <= now()
                      AND t.state = 'pending' AND NOT t.synthetic
                    ORDER BY t.ready_at LIMIT 1) h) q), '[]'::json) AS queues
       FROM claimed c`,
    [endpointId],
  );
  const row = res.rows[0];
  return row ? { slug: row.slug, reason: row.reason ?? 'clock_in', queues: row.queues } : null;
}

/**
 * Picks the one streaming session that declared claude/channel to hear a digest (rung
 * longest ago; docs/design/doorbell-acknowledgement.md, "Who is rung") and stamps the
 * counted todos as rung now, without spending their ring budget, so the next todo_ready
 * does not ring each of them again.
 */
export async function claimDigestTarget(
  db: Queryable,
  a: { endpointId: string; queues: string[] },
): Promise<{ session_id: string; instance: string } | null> {
  const res = await db.query<{ session_id: string; instance: string }>(
    `WITH target AS (
       SELECT s.endpoint_id, s.id, s.instance FROM mcp_sessions s
        WHERE s.endpoint_id = $1 AND s.closed_at IS NULL AND s.stream_open AND s.channel
        ORDER BY s.last_rung_at NULLS FIRST, s.created_at, s.id LIMIT 1),
     touched AS (
       UPDATE mcp_sessions s SET last_rung_at = now() FROM target
        WHERE s.endpoint_id = target.endpoint_id AND s.id = target.id),
     stamped AS (
       UPDATE todos t SET last_ringed_at = ${RUNG_AT}, last_rung_instance = target.instance FROM target
        WHERE t.endpoint_id = $1 AND t.queue = ANY($2) AND ${RING_READY})
     SELECT id AS session_id, instance FROM target`,
    [a.endpointId, a.queues],
  );
  return res.rows[0] ?? null;
}

/** Pending, push-visible work of an endpoint (the `pending` of the presence verb). */
export async function pendingCount(db: Queryable, endpointId: string): Promise<number> {
  const res = await db.query<{ n: number }>(
    `SELECT coalesce(sum(${countSql('e.id', 'q.queue', `'pending'`)}), 0)::int AS n
       FROM endpoints e CROSS JOIN LATERAL (
         SELECT queue FROM todo_counts WHERE endpoint_id = e.id AND state = 'pending'
         UNION SELECT queue FROM todo_count_deltas WHERE endpoint_id = e.id) q
      WHERE e.id = $1`,
    [endpointId],
  );
  return res.rows[0]?.n ?? 0;
}
