// Board sign-in sessions: the cookie carries an opaque token, this table its hash, the
// owner, a CSRF token for the session's forms, and the expiry.

import { notifySql } from '../db/bus.js';
import type { Queryable } from '../db/pool.js';
import type { Human } from './humans.js';

export async function insertBoardSession(
  db: Queryable,
  a: { tokenHash: Buffer; humanId: string; csrfToken: string; ttlSeconds: number },
): Promise<Date> {
  const res = await db.query<{ expires_at: Date }>(
    `INSERT INTO board_sessions (token_hash, human_id, csrf_token, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING expires_at`,
    [a.tokenHash, a.humanId, a.csrfToken, a.ttlSeconds],
  );
  return (res.rows[0] as { expires_at: Date }).expires_at;
}

/**
 * The live session's human, CSRF token and expiry, or null when unknown, expired or the
 * human is disabled.
 */
export async function findBoardSession(
  db: Queryable,
  tokenHash: Buffer,
): Promise<{ human: Human; csrf_token: string; expires_at: Date } | null> {
  const res = await db.query<Human & { csrf_token: string; session_expires_at: Date }>(
    `SELECT h.id, h.email, h.display_name, h.role, h.state, h.created_at, s.csrf_token,
            s.expires_at AS session_expires_at
       FROM board_sessions s JOIN humans h ON h.id = s.human_id
      WHERE s.token_hash = $1 AND s.expires_at > now() AND h.state = 'active'`,
    [tokenHash],
  );
  const row = res.rows[0];
  if (!row) return null;
  const { csrf_token, session_expires_at, ...human } = row;
  return { human, csrf_token, expires_at: session_expires_at };
}

/** Ends one board session; on commit, every instance closes the /ws connections opened with it. */
export async function deleteBoardSession(db: Queryable, tokenHash: Buffer): Promise<void> {
  await db.query(
    `WITH gone AS (DELETE FROM board_sessions WHERE token_hash = $1 RETURNING human_id)
     SELECT ${notifySql('board_sessions_ended', { human_id: 'human_id' })} FROM gone`,
    [tokenHash],
  );
}
