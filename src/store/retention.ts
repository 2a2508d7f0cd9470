// Retention statements for the tables that only grow (the sweeps are in
// src/sweeps/retention.ts). Each deletes one batch: the oldest dead rows in the order of
// the index migrations/0013_retention.sql (or the table's own migration) made for it,
// locked with SKIP LOCKED so it never waits on a request holding a row, and never a row
// that is still in use. Like every sweep, they act for the server across endpoints.
// Todos, admission windows, ring records and self-test reports have theirs next to the
// rest of their SQL (todo-sweeps.ts, admission.ts, doorbell-rings.ts, doorbell-tests.ts).

import type { Queryable } from '../db/pool.js';

/** One batch: rows dead for longer than `olderThanSeconds`, at most `limit` of them. */
export interface PruneArgs {
  olderThanSeconds: number;
  limit: number;
}

/** Runs one prune statement ($1 the age in seconds, $2 the batch) and answers the rows deleted. */
export async function deleted(db: Queryable, sql: string, a: PruneArgs): Promise<number> {
  const res = await db.query(sql, [a.olderThanSeconds, a.limit]);
  return res.rowCount ?? 0;
}

/**
 * Closed MCP sessions. A session that still owns a claimed todo stays (its lease has not
 * lapsed yet: the reaper requeues it first). Its queue-lock row goes with it (ON DELETE
 * CASCADE); its queued messages were purged when it closed. Ring, attempt and self-test
 * rows name sessions without a foreign key and keep the id as history.
 */
export function pruneClosedSessions(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT s.endpoint_id, s.id FROM mcp_sessions s
        WHERE s.closed_at < now() - make_interval(secs => $1)
          AND NOT EXISTS (
            SELECT 1 FROM todos t
             WHERE t.endpoint_id = s.endpoint_id AND t.state = 'claimed' AND t.owner_session_id = s.id)
        ORDER BY s.closed_at LIMIT $2 FOR UPDATE OF s SKIP LOCKED)
     DELETE FROM mcp_sessions s USING old WHERE s.endpoint_id = old.endpoint_id AND s.id = old.id`,
    a,
  );
}

/** Board sign-in sessions past their expiry (a live one is never older than its expiry). */
export function pruneBoardSessions(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT token_hash FROM board_sessions
        WHERE expires_at < now() - make_interval(secs => $1)
        ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM board_sessions b USING old WHERE b.token_hash = old.token_hash`,
    a,
  );
}

/** Setup and invite links spent or expired before the cutoff; an unspent, unexpired one never. */
export function pruneSetupTokens(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT token_hash FROM setup_tokens
        WHERE coalesce(used_at, expires_at) < now() - make_interval(secs => $1)
        ORDER BY coalesce(used_at, expires_at) LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM setup_tokens t USING old WHERE t.token_hash = old.token_hash`,
    a,
  );
}

/** API tokens revoked or expired (whichever came first) before the cutoff. */
export function pruneApiTokens(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT id FROM api_tokens
        WHERE least(revoked_at, expires_at) < now() - make_interval(secs => $1)
        ORDER BY least(revoked_at, expires_at) LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM api_tokens t USING old WHERE t.id = old.id`,
    a,
  );
}

/** Inbound webhook delivery ids received before the cutoff: a replay after that makes a new todo. */
export function pruneWebhookDeliveries(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT endpoint_id, webhook_id, delivery_id FROM webhook_deliveries
        WHERE received_at < now() - make_interval(secs => $1)
        ORDER BY received_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM webhook_deliveries d USING old
      WHERE d.endpoint_id = old.endpoint_id AND d.webhook_id = old.webhook_id AND d.delivery_id = old.delivery_id`,
    a,
  );
}

/** Admission policy audit entries written before the cutoff (the policy itself is never touched). */
export function pruneAdmissionAudit(db: Queryable, a: PruneArgs): Promise<number> {
  return deleted(
    db,
    `WITH old AS (
       SELECT id FROM admission_policy_audit
        WHERE at < now() - make_interval(secs => $1)
        ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM admission_policy_audit p USING old WHERE p.id = old.id`,
    a,
  );
}
