// The human lifecycle's statements (docs/design/people.md): cutting a human off (their
// API tokens, board sessions and their endpoints' live MCP sessions, at once and on every
// instance), handing their endpoints to another human or removing them, revoking their
// sign-ins after a password change or reset, and the audit of what admins did.

import { notifySql } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import { releaseClaimsOfSql } from './sessions.js';

export type HumanAuditAction =
  'create' | 'disable' | 'enable' | 'role' | 'reset' | 'delete' | 'token_revoke' | 'password' | 'oidc_unlink';

/** What cutting a human off ended. */
export interface CutOff {
  tokens_revoked: number;
  board_sessions_ended: number;
  sessions_closed: number;
  /** Their endpoints that were live: every instance drops what it holds of them. */
  endpoint_ids: string[];
}

/**
 * Revokes every live API token of the human and ends every board session, closes the
 * live MCP sessions of their endpoints (releasing the sessions' claims, as a close does,
 * releaseClaimsOfSql) and, on commit, tells every instance: `session_closed` per session
 * and `endpoint_revoked` per endpoint, so each drops its credential answers, streams and
 * waits for them, and `human_disabled`, so each closes the human's board connections (the credential itself stops matching through the owner's state, not
 * by revoking the endpoint: enabling the human brings it back). O(what the human has
 * live): their tokens and sessions through their indexes, never history.
 */
export async function cutOffHuman(db: Queryable, humanId: string): Promise<CutOff> {
  const res = await db.query<CutOff>(
    `WITH tokens AS (
       UPDATE api_tokens SET revoked_at = now()
        WHERE human_id = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now()) RETURNING id),
     boards AS (DELETE FROM board_sessions WHERE human_id = $1 RETURNING human_id),
     -- Their OAuth grants are revoked for good, not suspended (docs/design/oauth.md, "Revocation").
     grants AS (
       UPDATE oauth_grants SET revoked_at = now(), revoked_reason = 'human_disabled'
        WHERE human_id = $1 AND revoked_at IS NULL),
     eps AS (SELECT id FROM endpoints WHERE human_id = $1 AND revoked_at IS NULL),
     closed AS (
       UPDATE mcp_sessions s SET closed_at = now(), stream_open = false
         FROM eps WHERE s.endpoint_id = eps.id AND s.closed_at IS NULL RETURNING s.endpoint_id, s.id),
     ${releaseClaimsOfSql('closed')},
     closed_told AS (
       SELECT ${notifySql('session_closed', { endpoint_id: 'endpoint_id', session_id: 'id' })} FROM closed),
     eps_told AS (SELECT ${notifySql('endpoint_revoked', { endpoint_id: 'id' })} FROM eps),
     human_told AS (SELECT ${notifySql('human_disabled', { human_id: '$1::text' })})
     SELECT (SELECT count(*) FROM tokens)::int AS tokens_revoked,
            (SELECT count(*) FROM boards)::int AS board_sessions_ended,
            (SELECT count(*) FROM closed_told)::int AS sessions_closed,
            (SELECT count(*) FROM eps_told) + (SELECT count(*) FROM human_told) AS told,
            (SELECT count(*) FROM rel_ready) AS ready,
            (SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM eps) AS endpoint_ids`,
    [humanId],
  );
  const row = res.rows[0] as CutOff & { told?: unknown; ready?: unknown };
  return {
    tokens_revoked: row.tokens_revoked,
    board_sessions_ended: row.board_sessions_ended,
    sessions_closed: row.sessions_closed,
    endpoint_ids: row.endpoint_ids,
  };
}

/**
 * Revokes the human's live API tokens but `keepTokenId`, and ends all their board
 * sessions (after a password change or a reset); on commit every instance closes the /ws
 * connections opened with those sessions. Returns how many of each.
 */
export async function endSignIns(
  db: Queryable,
  humanId: string,
  keepTokenId: string | null,
): Promise<{ tokens_revoked: number; board_sessions_ended: number }> {
  const res = await db.query<{ tokens_revoked: number; board_sessions_ended: number }>(
    `WITH tokens AS (
       UPDATE api_tokens SET revoked_at = now()
        WHERE human_id = $1 AND revoked_at IS NULL AND id IS DISTINCT FROM $2
          AND (expires_at IS NULL OR expires_at > now()) RETURNING id),
     boards AS (DELETE FROM board_sessions WHERE human_id = $1 RETURNING human_id),
     told AS (SELECT ${notifySql('board_sessions_ended', { human_id: '$1::text' })} WHERE EXISTS (SELECT 1 FROM boards))
     SELECT (SELECT count(*) FROM tokens)::int AS tokens_revoked, (SELECT count(*) FROM boards)::int AS board_sessions_ended,
            (SELECT count(*) FROM told) AS told`,
    [humanId, keepTokenId],
  );
  const row = res.rows[0] as { tokens_revoked: number; board_sessions_ended: number };
  return { tokens_revoked: row.tokens_revoked, board_sessions_ended: row.board_sessions_ended };
}

/** Tells every instance, on commit, that the human is gone: their board connections close. */
export async function announceHumanGone(db: Queryable, humanId: string): Promise<void> {
  await db.query(`SELECT ${notifySql('human_disabled', { human_id: '$1::text' })}`, [humanId]);
}

/** Gives every endpoint of `fromId` (revoked ones too) to `toId`; how many moved. */
export async function transferEndpoints(db: Queryable, fromId: string, toId: string): Promise<number> {
  const res = await db.query('UPDATE endpoints SET human_id = $2 WHERE human_id = $1', [fromId, toId]);
  return res.rowCount ?? 0;
}

/** The ids of the human's endpoints that are not revoked yet. */
export async function liveEndpointIds(db: Queryable, humanId: string): Promise<string[]> {
  const res = await db.query<{ id: string }>(
    'SELECT id FROM endpoints WHERE human_id = $1 AND revoked_at IS NULL ORDER BY id',
    [humanId],
  );
  return res.rows.map((r) => r.id);
}

/** Deletes every (revoked) endpoint of the human; their todos, webhooks and the rest go with them. */
export async function deleteEndpointsOf(db: Queryable, humanId: string): Promise<number> {
  const res = await db.query('DELETE FROM endpoints WHERE human_id = $1 AND revoked_at IS NOT NULL', [humanId]);
  return res.rowCount ?? 0;
}

/** Ends the human's unspent reset links, so only the newest one works. */
export async function spendResetLinks(db: Queryable, humanId: string): Promise<void> {
  await db.query(
    `UPDATE setup_tokens SET used_at = now() WHERE human_id = $1 AND purpose = 'reset' AND used_at IS NULL`,
    [humanId],
  );
}

export async function insertHumanAudit(
  db: Queryable,
  a: { humanId: string; actorHumanId: string; action: HumanAuditAction; detail?: Record<string, unknown> },
): Promise<void> {
  await db.query('INSERT INTO human_audit (human_id, actor_human_id, action, detail) VALUES ($1, $2, $3, $4)', [
    a.humanId,
    a.actorHumanId,
    a.action,
    JSON.stringify(a.detail ?? {}),
  ]);
}

/** Human audit entries written before the cutoff (retention, src/sweeps/retention.ts). */
export async function pruneHumanAudit(db: Queryable, a: { olderThanSeconds: number; limit: number }): Promise<number> {
  const res = await db.query(
    `WITH old AS (
       SELECT id FROM human_audit WHERE at < now() - make_interval(secs => $1)
        ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM human_audit h USING old WHERE h.id = old.id`,
    [a.olderThanSeconds, a.limit],
  );
  return res.rowCount ?? 0;
}

/** One entry of a human's audit, as the API and the CLI show it. */
export interface HumanAuditEntry {
  id: string;
  action: HumanAuditAction;
  actor_human_id: string;
  /** The actor's e-mail while the actor still exists (the audit outlives both humans). */
  actor_email: string | null;
  detail: Record<string, unknown>;
  at: Date;
}

/**
 * A human's audit, newest first, `limit` entries before the entry `beforeId` (a page's
 * cursor). Through human_audit_scope: the rows of one human, as many as people changed them.
 */
export async function listHumanAudit(
  db: Queryable,
  humanId: string,
  a: { limit: number; beforeId: string | null },
): Promise<HumanAuditEntry[]> {
  const res = await db.query<HumanAuditEntry>(
    `SELECT h.id::text AS id, h.action, h.actor_human_id, actor.email AS actor_email, h.detail, h.at
       FROM human_audit h LEFT JOIN humans actor ON actor.id = h.actor_human_id
      WHERE h.human_id = $1 AND ($3::bigint IS NULL OR h.id < $3::bigint)
      ORDER BY h.at DESC, h.id DESC LIMIT $2`,
    [humanId, a.limit, a.beforeId],
  );
  return res.rows;
}
