// Admission policies, their window counters and audit (docs/design/admission.md). Every
// read is scoped by endpoint_id, except the sweeps' (reopen, retention, the metrics
// collector), which act for the server. Policy writes and their audit row commit together.

import { notifySql } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import { inTransaction } from '../db/tx.js';
import type { PolicyRow, PolicyState } from '../domain/admission.js';
import { countSql } from './todo-counts.js';

export type { PolicyRow, PolicyState };
// src/metrics/admission.ts reads countersOf from here; it lives in src/domain/admission.ts.
export { countersOf } from '../domain/admission.js';

export const POLICY_COLUMNS = `p.id, p.endpoint_id, p.queue, p.max_in_flight, p.max_claims_per_window,
  p.window_period, p.window_tz, p.window_start, p.window_weekday, p.created_at, p.updated_at`;

const STATE = `
  SELECT ${POLICY_COLUMNS}, p.held_at, now() AS at,
    (SELECT count(*) FROM todos t WHERE t.endpoint_id = p.endpoint_id AND t.queue = p.queue AND t.state = 'claimed')
      AS in_flight,
    (SELECT min(t.lease_expires_at) FROM todos t
      WHERE t.endpoint_id = p.endpoint_id AND t.queue = p.queue AND t.state = 'claimed') AS earliest_lease,
    ${countSql('p.endpoint_id', 'p.queue', `'pending'`)} AS pending,
    w.window_start AS latest_start, w.used AS latest_used
  FROM admission_policies p
  LEFT JOIN LATERAL (SELECT window_start, used FROM admission_windows
                      WHERE policy_id = p.id ORDER BY window_start DESC LIMIT 1) w ON true`;

/** The policies of one endpoint (optionally only these queues), with their counters. */
export async function policyStates(db: Queryable, endpointId: string, queues: string[] | null): Promise<PolicyState[]> {
  const res = await db.query<PolicyState>({
    name: 'admission_policy_states',
    text: `${STATE} WHERE p.endpoint_id = $1 AND ($2::text[] IS NULL OR p.queue = ANY($2::text[])) ORDER BY p.queue`,
    values: [endpointId, queues],
  });
  return res.rows;
}

/** The policies of every endpoint this human owns, with their counters and endpoint slugs. */
export async function policyStatesOfHuman(
  db: Queryable,
  humanId: string,
): Promise<Array<PolicyState & { endpoint_slug: string }>> {
  const res = await db.query<PolicyState & { endpoint_slug: string }>(
    `SELECT s.*, e.slug AS endpoint_slug FROM (${STATE}) s JOIN endpoints e ON e.id = s.endpoint_id
      WHERE e.human_id = $1 ORDER BY e.slug, s.queue`,
    [humanId],
  );
  return res.rows;
}

/** Every policy, for the metrics collector (bounded: one row per policy). */
export async function allPolicyStates(db: Queryable, limit: number): Promise<PolicyState[]> {
  const res = await db.query<PolicyState>(`${STATE} ORDER BY p.id LIMIT $1`, [limit]);
  return res.rows;
}

/** Policies owing a push (held back work), for the reopen sweep. */
export async function heldPolicyStates(db: Queryable, limit: number): Promise<PolicyState[]> {
  const res = await db.query<PolicyState>(`${STATE} WHERE p.held_at IS NOT NULL ORDER BY p.held_at LIMIT $1`, [limit]);
  return res.rows;
}

/**
 * The limits a write stores, column by column: a body already checked against the
 * schema's CHECKs (src/admission/policy.ts, parsePolicy), which this module does not
 * repeat; `weekday` is stored only for a week.
 */
export interface StoredLimits {
  max_in_flight: number | null;
  max_claims_per_window: number | null;
  window: { period: string; tz: string; start: string; weekday?: string } | null;
}

export interface PolicyWrite {
  endpointId: string;
  queue: string;
  limits: StoredLimits;
  actorHumanId: string;
  actorEndpointId: string | null;
}

const AUDIT_COLUMNS = `p.max_in_flight, p.max_claims_per_window, p.window_period, p.window_tz, p.window_start,
  p.window_weekday`;
const auditJson = (alias: string) =>
  `jsonb_build_object('max_in_flight', ${alias}.max_in_flight, 'max_claims_per_window', ${alias}.max_claims_per_window,
     'window_period', ${alias}.window_period, 'window_tz', ${alias}.window_tz, 'window_start', ${alias}.window_start,
     'window_weekday', ${alias}.window_weekday)`;

/**
 * Creates or fully replaces the policy of (endpoint, queue) and writes its audit row in
 * the same statement. `before` is read under the row's lock, so two writers audit in order.
 */
export async function upsertPolicy(db: Queryable, w: PolicyWrite): Promise<{ policy: PolicyRow; created: boolean }> {
  return inTransaction(db, async (tx) => {
    // Locked first, in its own statement: a lock taken in the upsert's own CTE would skip
    // the row that statement updates, and two writers must audit in commit order.
    const before = await tx.query(
      `SELECT 1 FROM admission_policies p WHERE p.endpoint_id = $1 AND p.queue = $2 FOR UPDATE`,
      [w.endpointId, w.queue],
    );
    return upsertLocked(tx, w, (before.rowCount ?? 0) > 0);
  });
}

async function upsertLocked(
  db: Queryable,
  w: PolicyWrite,
  existed: boolean,
): Promise<{ policy: PolicyRow; created: boolean }> {
  const win = w.limits.window;
  const res = await db.query<PolicyRow & { created: boolean }>(
    `WITH before AS (
       SELECT p.id, ${AUDIT_COLUMNS} FROM admission_policies p WHERE p.endpoint_id = $1 AND p.queue = $2),
     p AS (
       INSERT INTO admission_policies AS p (endpoint_id, queue, max_in_flight, max_claims_per_window, window_period,
         window_tz, window_start, window_weekday, created_by_human_id, updated_by_human_id)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
       ON CONFLICT (endpoint_id, queue) DO UPDATE SET max_in_flight = EXCLUDED.max_in_flight,
         max_claims_per_window = EXCLUDED.max_claims_per_window, window_period = EXCLUDED.window_period,
         window_tz = EXCLUDED.window_tz, window_start = EXCLUDED.window_start,
         window_weekday = EXCLUDED.window_weekday, updated_by_human_id = $9, updated_at = now()
       RETURNING ${POLICY_COLUMNS}, ${auditJson('p')} AS after),
     audit AS (
       INSERT INTO admission_policy_audit (policy_id, endpoint_id, queue, actor_human_id, actor_endpoint_id, action,
         before, after)
       SELECT p.id, $1, $2, $9, $10, CASE WHEN EXISTS (SELECT 1 FROM before) THEN 'update' ELSE 'create' END,
         (SELECT ${auditJson('before')} FROM before), p.after FROM p)
     SELECT p.id, p.endpoint_id, p.queue, p.max_in_flight, p.max_claims_per_window, p.window_period, p.window_tz,
       p.window_start, p.window_weekday, p.created_at, p.updated_at, NOT EXISTS (SELECT 1 FROM before) AS created
       FROM p`,
    [
      w.endpointId,
      w.queue,
      w.limits.max_in_flight,
      w.limits.max_claims_per_window,
      win?.period ?? null,
      win?.tz ?? null,
      win?.start ?? null,
      win && win.period === 'week' ? (win.weekday ?? null) : null,
      w.actorHumanId,
      w.actorEndpointId,
    ],
  );
  const { created: _created, ...policy } = res.rows[0] as PolicyRow & { created: boolean };
  return { policy, created: !existed };
}

/**
 * Deletes the policy of (endpoint, queue) with its windows, audits it, and — when work is
 * pending on the queue — sends one todo_ready on commit: the old behaviour, at once.
 */
export async function deletePolicy(db: Queryable, w: Omit<PolicyWrite, 'limits'>): Promise<{ deleted: boolean }> {
  const res = await db.query<{ id: string }>(
    `WITH p AS (
       DELETE FROM admission_policies p WHERE p.endpoint_id = $1 AND p.queue = $2
       RETURNING p.id, p.endpoint_id, p.queue, ${AUDIT_COLUMNS}),
     audit AS (
       INSERT INTO admission_policy_audit (policy_id, endpoint_id, queue, actor_human_id, actor_endpoint_id, action,
         before)
       SELECT p.id, $1, $2, $3, $4, 'delete', ${auditJson('p')} FROM p),
     notified AS (
       SELECT ${notifySql('todo_ready', { endpoint_id: 'p.endpoint_id', queue: 'p.queue', reopen: 'true' })} FROM p
        WHERE ${countSql('p.endpoint_id', 'p.queue', `'pending'`)} > 0)
     SELECT p.id, (SELECT count(*) FROM notified) AS notices FROM p`,
    [w.endpointId, w.queue, w.actorHumanId, w.actorEndpointId],
  );
  return { deleted: (res.rowCount ?? 0) > 0 };
}

/** The last `limit` windows of a policy, newest first. */
export async function listWindows(
  db: Queryable,
  policyId: string,
  limit: number,
): Promise<Array<{ window_start: Date; used: number; updated_at: Date }>> {
  const res = await db.query<{ window_start: Date; used: number; updated_at: Date }>(
    `SELECT window_start, used, updated_at FROM admission_windows WHERE policy_id = $1
      ORDER BY window_start DESC LIMIT $2`,
    [policyId, limit],
  );
  return res.rows;
}

export interface AuditRow {
  id: number;
  action: string;
  actor_human_id: string;
  /** The actor's email, for people reading the audit; null once the human is deleted. */
  actor_email: string | null;
  actor_endpoint_id: string | null;
  before: unknown;
  after: unknown;
  at: Date;
}

/** The newest audit rows of (endpoint, queue); they outlive the policy. */
export async function listAudit(db: Queryable, endpointId: string, queue: string, limit: number): Promise<AuditRow[]> {
  const res = await db.query<AuditRow>(
    `SELECT a.id, a.action, a.actor_human_id, h.email AS actor_email, a.actor_endpoint_id, a.before, a.after, a.at
       FROM admission_policy_audit a LEFT JOIN humans h ON h.id = a.actor_human_id
      WHERE a.endpoint_id = $1 AND a.queue = $2 ORDER BY a.at DESC, a.id DESC LIMIT $3`,
    [endpointId, queue, limit],
  );
  return res.rows;
}

/**
 * Records that work of these policies was held back without a push (a reopen then owes
 * one); answers the queues it newly marked. `until` is when the deferral the caller read
 * ends (its next_eligible_at): a mark written after that instant is skipped, since the
 * caller decided on a window that has since rolled over and a reopen may already have
 * cleared the mark and pushed — marking it again would make the next reopen push once more.
 */
export async function markHeld(
  db: Queryable,
  holds: Array<{ policyId: string; until: string | null }>,
): Promise<Array<{ endpoint_id: string; queue: string }>> {
  if (holds.length === 0) return [];
  const res = await db.query<{ endpoint_id: string; queue: string }>(
    `UPDATE admission_policies p SET held_at = now()
       FROM unnest($1::uuid[], $2::timestamptz[]) h(id, until)
      WHERE p.id = h.id AND p.held_at IS NULL AND (h.until IS NULL OR now() < h.until)
      RETURNING p.endpoint_id, p.queue`,
    [holds.map((h) => h.policyId), holds.map((h) => h.until)],
  );
  return res.rows;
}

/**
 * Clears a policy's held mark and, when it matched and push-eligible work is pending,
 * sends one todo_ready (flagged as a reopen) on commit. The conditional update makes the
 * push happen once, whichever instance or trigger gets here first.
 */
export async function reopenPolicy(db: Queryable, policyId: string): Promise<boolean> {
  const res = await db.query<{ notified: boolean }>(
    `WITH r AS (
       UPDATE admission_policies SET held_at = NULL WHERE id = $1 AND held_at IS NOT NULL
       RETURNING endpoint_id, queue)
     SELECT ${notifySql('todo_ready', { endpoint_id: 'r.endpoint_id', queue: 'r.queue', reopen: 'true' })} IS NOT NULL
              AS notified
       FROM r WHERE ${countSql('r.endpoint_id', 'r.queue', `'pending'`)} > 0`,
    [policyId],
  );
  return (res.rowCount ?? 0) > 0;
}

/** The held policy of (endpoint, queue), if any: what a settled claim checks before a reopen. */
export async function heldPolicyOf(db: Queryable, endpointId: string, queue: string): Promise<PolicyState | null> {
  const res = await db.query<PolicyState>({
    name: 'admission_held_policy',
    text: `${STATE} WHERE p.endpoint_id = $1 AND p.queue = $2 AND p.held_at IS NOT NULL`,
    values: [endpointId, queue],
  });
  return res.rows[0] ?? null;
}

/** Pending todos of these queues, by queue: the `pending` of a deferred entry. */
export async function pendingByQueue(
  db: Queryable,
  endpointId: string,
  queues: string[],
): Promise<Map<string, number>> {
  const res = await db.query<{ queue: string; n: number }>(
    `SELECT q.queue, ${countSql('$1', 'q.queue', `'pending'`)}::int AS n FROM unnest($2::text[]) q(queue)`,
    [endpointId, queues],
  );
  return new Map(res.rows.map((r) => [r.queue, r.n]));
}

/** Deletes one batch of windows that started more than `days` days ago. */
export async function pruneWindows(db: Queryable, days: number, limit: number): Promise<number> {
  const res = await db.query(
    `DELETE FROM admission_windows w USING (
       SELECT policy_id, window_start FROM admission_windows
        WHERE window_start < now() - make_interval(days => $1) LIMIT $2) old
      WHERE w.policy_id = old.policy_id AND w.window_start = old.window_start`,
    [days, limit],
  );
  return res.rowCount ?? 0;
}
