// One-time links (first-admin setup, invites, password resets), stored as hashes and spent on use.

import type { Queryable } from '../db/pool.js';

export type LinkPurpose = 'setup' | 'invite' | 'reset';

export async function insertSetupToken(
  db: Queryable,
  a: { tokenHash: Buffer; purpose: LinkPurpose; humanId: string | null; ttlSeconds: number },
): Promise<Date> {
  const res = await db.query<{ expires_at: Date }>(
    `INSERT INTO setup_tokens (token_hash, purpose, human_id, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING expires_at`,
    [a.tokenHash, a.purpose, a.humanId, a.ttlSeconds],
  );
  return (res.rows[0] as { expires_at: Date }).expires_at;
}

/** Spends a live token: exactly one caller ever gets its row back. */
export async function consumeSetupToken(
  db: Queryable,
  tokenHash: Buffer,
): Promise<{ purpose: LinkPurpose; human_id: string | null } | null> {
  const res = await db.query<{ purpose: LinkPurpose; human_id: string | null }>(
    `UPDATE setup_tokens SET used_at = now()
      WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
      RETURNING purpose, human_id`,
    [tokenHash],
  );
  return res.rows[0] ?? null;
}

/**
 * Serialises first-admin setups (transaction-scoped advisory lock), so two setup links
 * spent at once cannot both find no humans and both create an admin.
 */
export async function lockSetup(db: Queryable): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtext('switchboard.setup'))`);
}

/** Whether a token would be accepted, without spending it (to show the setup form). */
export async function setupTokenLive(db: Queryable, tokenHash: Buffer): Promise<boolean> {
  const res = await db.query(
    'SELECT 1 FROM setup_tokens WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()',
    [tokenHash],
  );
  return res.rowCount === 1;
}
