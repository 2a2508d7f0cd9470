// Hand-off grants and their audit (docs/design/handoff.md): one row per grant (from
// endpoint → to endpoint, queues, optional ceiling and rate, state), read by either side's
// owner; the decision statements are conditional updates on the state, so a decision
// racing another resolves in the database (the loser matches no row). The hand-off's
// lock (`lockActiveGrant`) is taken in the transaction that inserts the todo.

import type { Queryable } from '../db/pool.js';
import { translatePgError } from './pg-errors.js';

export type GrantState = 'active' | 'requested' | 'denied' | 'revoked';
export type GrantAction = 'create' | 'request' | 'approve' | 'deny' | 'revoke';

export interface GrantRow {
  id: string;
  from_endpoint_id: string;
  from_slug: string;
  from_human_id: string;
  to_endpoint_id: string;
  to_slug: string;
  to_human_id: string;
  queues: string[];
  max_priority: number | null;
  rate_per_hour: number | null;
  state: GrantState;
  requested_by: string;
  decided_by: string | null;
  revoked_by: string | null;
  created_at: Date;
  decided_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = `g.id, g.from_endpoint_id, f.slug AS from_slug, f.human_id AS from_human_id,
  g.to_endpoint_id, t.slug AS to_slug, t.human_id AS to_human_id, g.queues, g.max_priority,
  g.rate_per_hour, g.state, g.requested_by, g.decided_by, g.revoked_by, g.created_at,
  g.decided_at, g.revoked_at`;
const JOINED = `grants g JOIN endpoints f ON f.id = g.from_endpoint_id JOIN endpoints t ON t.id = g.to_endpoint_id`;

/** An endpoint by slug, whoever owns it; a revoked one is not addressable. */
export async function liveEndpointBySlug(
  db: Queryable,
  slug: string,
): Promise<{ id: string; slug: string; human_id: string; queues: string[] } | null> {
  const res = await db.query<{ id: string; slug: string; human_id: string; queues: string[] }>(
    `SELECT id, slug, human_id, queues FROM endpoints WHERE slug = $1 AND revoked_at IS NULL`,
    [slug],
  );
  return res.rows[0] ?? null;
}

export interface InsertGrantArgs {
  id: string;
  fromEndpointId: string;
  toEndpointId: string;
  queues: string[];
  maxPriority: number | null;
  ratePerHour: number | null;
  state: 'active' | 'requested';
  humanId: string;
}

export async function insertGrant(db: Queryable, a: InsertGrantArgs): Promise<GrantRow> {
  try {
    const res = await db.query<GrantRow>(
      `WITH g AS (
         INSERT INTO grants (id, from_endpoint_id, to_endpoint_id, queues, max_priority, rate_per_hour, state,
           requested_by, decided_by, decided_at)
         VALUES ($1, $2, $3, $4::text[], $5, $6, $7, $8,
           CASE WHEN $7 = 'active' THEN $8 END, CASE WHEN $7 = 'active' THEN now() END)
         RETURNING *)
       SELECT ${COLUMNS} FROM g JOIN endpoints f ON f.id = g.from_endpoint_id JOIN endpoints t ON t.id = g.to_endpoint_id`,
      [a.id, a.fromEndpointId, a.toEndpointId, a.queues, a.maxPriority, a.ratePerHour, a.state, a.humanId],
    );
    return res.rows[0]!;
  } catch (err) {
    throw translatePgError(err, 'a requested or active grant already exists in this direction; revoke it first', 'to');
  }
}

/** A grant either side's owner can see; anyone else's answers null. */
export async function getVisibleGrant(db: Queryable, humanId: string, id: string): Promise<GrantRow | null> {
  const res = await db.query<GrantRow>(
    `SELECT ${COLUMNS} FROM ${JOINED} WHERE g.id = $2 AND (f.human_id = $1 OR t.human_id = $1)`,
    [humanId, id],
  );
  return res.rows[0] ?? null;
}

/** Both directions: grants from and to the human's endpoints, newest first. */
export async function listVisibleGrants(db: Queryable, humanId: string, limit: number): Promise<GrantRow[]> {
  const res = await db.query<GrantRow>(
    `SELECT ${COLUMNS} FROM ${JOINED} WHERE f.human_id = $1 OR t.human_id = $1 ORDER BY g.created_at DESC, g.id DESC
      LIMIT $2`,
    [humanId, limit],
  );
  return res.rows;
}

/**
 * approve / deny: the to-side owner's decision on a requested grant. Returns the grant, or
 * null when it is not theirs or no longer requested (the caller tells which).
 */
export async function decideGrant(
  db: Queryable,
  a: { id: string; humanId: string; to: 'active' | 'denied' },
): Promise<GrantRow | null> {
  const res = await db.query<GrantRow>(
    `WITH g AS (
       UPDATE grants SET state = $3, decided_by = $2, decided_at = now()
        WHERE id = $1 AND state = 'requested'
          AND to_endpoint_id IN (SELECT id FROM endpoints WHERE human_id = $2)
        RETURNING *)
     SELECT ${COLUMNS} FROM g JOIN endpoints f ON f.id = g.from_endpoint_id JOIN endpoints t ON t.id = g.to_endpoint_id`,
    [a.id, a.humanId, a.to],
  );
  return res.rows[0] ?? null;
}

/** Either side's owner ends a requested or active grant; null when it is not visible or already ended. */
export async function revokeGrant(db: Queryable, a: { id: string; humanId: string }): Promise<GrantRow | null> {
  const res = await db.query<GrantRow>(
    `WITH g AS (
       UPDATE grants SET state = 'revoked', revoked_by = $2, revoked_at = now()
        WHERE id = $1 AND state IN ('requested', 'active')
          AND (from_endpoint_id IN (SELECT id FROM endpoints WHERE human_id = $2)
            OR to_endpoint_id IN (SELECT id FROM endpoints WHERE human_id = $2))
        RETURNING *)
     SELECT ${COLUMNS} FROM g JOIN endpoints f ON f.id = g.from_endpoint_id JOIN endpoints t ON t.id = g.to_endpoint_id`,
    [a.id, a.humanId],
  );
  return res.rows[0] ?? null;
}

export interface AuditArgs {
  grant: Pick<GrantRow, 'id' | 'from_human_id' | 'to_human_id'>;
  actorHumanId: string;
  action: GrantAction;
  detail?: Record<string, unknown>;
}

export async function auditGrant(db: Queryable, a: AuditArgs): Promise<void> {
  await db.query(
    `INSERT INTO grant_audit (grant_id, from_human_id, to_human_id, actor_human_id, action, detail)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb)`,
    [a.grant.id, a.grant.from_human_id, a.grant.to_human_id, a.actorHumanId, a.action, JSON.stringify(a.detail ?? {})],
  );
}

export interface GrantAuditRow {
  grant_id: string;
  actor_human_id: string;
  action: GrantAction;
  detail: Record<string, unknown>;
  at: Date;
}

/**
 * One grant's history in the order its changes took the grant's row lock: by id, assigned
 * after the decision's update, not by `at` (a transaction's start, which a decision that
 * waited for another may predate).
 */
export async function grantAudit(db: Queryable, grantId: string): Promise<GrantAuditRow[]> {
  const res = await db.query<GrantAuditRow>(
    `SELECT grant_id, actor_human_id, action, detail, at FROM grant_audit WHERE grant_id = $1 ORDER BY id`,
    [grantId],
  );
  return res.rows;
}

/** The human's side of every grant's history (both directions), newest first. */
export async function auditOfHuman(db: Queryable, humanId: string, limit: number): Promise<GrantAuditRow[]> {
  const res = await db.query<GrantAuditRow>(
    `(SELECT id, grant_id, actor_human_id, action, detail, at FROM grant_audit WHERE from_human_id = $1
       ORDER BY at DESC LIMIT $2)
     UNION
     (SELECT id, grant_id, actor_human_id, action, detail, at FROM grant_audit WHERE to_human_id = $1
       ORDER BY at DESC LIMIT $2)
     ORDER BY at DESC, id DESC LIMIT $2`,
    [humanId, limit],
  );
  return res.rows.map(({ grant_id, actor_human_id, action, detail, at }) => ({
    grant_id,
    actor_human_id,
    action,
    detail,
    at,
  }));
}

export interface LockedGrant {
  id: string;
  queues: string[];
  max_priority: number | null;
  rate_per_hour: number | null;
  /** Hand-offs already counted in the current hour window (0 when the window rolled over). */
  used: number;
}

/**
 * The hand-off's check, in its transaction: the active grant from `fromEndpointId` to the
 * live endpoint `toEndpointId`, locked so a revoke waits for this hand-off to commit, and
 * any later hand-off sees the revoke. Null: no active grant (unknown, denied, revoked).
 */
export async function lockActiveGrant(db: Queryable, fromEndpointId: string, toEndpointId: string) {
  const res = await db.query<LockedGrant>(
    `SELECT id, queues, max_priority, rate_per_hour,
            CASE WHEN window_start IS NULL OR window_start <= now() - interval '1 hour' THEN 0 ELSE window_count END AS used
       FROM grants WHERE from_endpoint_id = $1 AND to_endpoint_id = $2 AND state = 'active' FOR UPDATE`,
    [fromEndpointId, toEndpointId],
  );
  return res.rows[0] ?? null;
}

/** Counts one hand-off in the grant's hour window (opening a new window when the last one ended). */
export async function countHandoff(db: Queryable, grantId: string): Promise<void> {
  await db.query(
    `UPDATE grants SET
       window_start = CASE WHEN window_start IS NULL OR window_start <= now() - interval '1 hour' THEN now() ELSE window_start END,
       window_count = CASE WHEN window_start IS NULL OR window_start <= now() - interval '1 hour' THEN 1 ELSE window_count + 1 END
     WHERE id = $1`,
    [grantId],
  );
}

/** Retention: audit rows older than the cutoff, at most `batch` per call. */
export async function pruneGrantAudit(db: Queryable, a: { olderThanSeconds: number; limit: number }): Promise<number> {
  const res = await db.query(
    `DELETE FROM grant_audit WHERE id IN (
       SELECT id FROM grant_audit WHERE at < now() - make_interval(secs => $1) ORDER BY at LIMIT $2
       FOR UPDATE SKIP LOCKED)`,
    [a.olderThanSeconds, a.limit],
  );
  return res.rowCount ?? 0;
}
