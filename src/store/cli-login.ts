// The one-time codes of `switchboard login --web` (docs/design/cli-login.md): made by the
// board's approval, spent once by POST /api/v1/auth/cli-token, all by their SHA-256. Every
// lookup is by the primary key; retention reads the expiry index.

import type { Queryable } from '../db/pool.js';
import type { PruneArgs } from './retention.js';

/** An approval just given: its code, bound to the human, the loopback URI, the challenge and the token name. */
export async function insertCliLoginCode(
  db: Queryable,
  a: {
    hash: Buffer;
    humanId: string;
    redirectUri: string;
    codeChallenge: string;
    tokenName: string;
    ttlSeconds: number;
  },
): Promise<void> {
  await db.query(
    `INSERT INTO cli_login_codes (hash, human_id, redirect_uri, code_challenge, token_name, expires_at)
     VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6))`,
    [a.hash, a.humanId, a.redirectUri, a.codeChallenge, a.tokenName, a.ttlSeconds],
  );
}

export interface CliLoginCodeRow {
  human_id: string;
  redirect_uri: string;
  code_challenge: string;
  token_name: string;
  expired: boolean;
  used: boolean;
  /** Whether the human who approved is still active. */
  human_active: boolean;
}

/**
 * The code, locked, then marked used in the same transaction: it is spent by its first
 * presentation whatever that one's fate, so a wrong verifier cannot be retried against it.
 */
export async function spendCliLoginCode(tx: Queryable, hash: Buffer): Promise<CliLoginCodeRow | null> {
  const res = await tx.query<CliLoginCodeRow>(
    `SELECT c.human_id, c.redirect_uri, c.code_challenge, c.token_name,
            c.expires_at <= now() AS expired, c.used_at IS NOT NULL AS used, h.state = 'active' AS human_active
       FROM cli_login_codes c JOIN humans h ON h.id = c.human_id
      WHERE c.hash = $1 FOR UPDATE OF c`,
    [hash],
  );
  const row = res.rows[0];
  if (row && !row.used) await tx.query(`UPDATE cli_login_codes SET used_at = now() WHERE hash = $1`, [hash]);
  return row ?? null;
}

/**
 * Codes expired before the cutoff, spent or not (a code is spent, if at all, before it
 * expires, so its expiry is when it is dead); one that can still be spent never goes.
 */
export async function pruneCliLoginCodes(db: Queryable, a: PruneArgs): Promise<number> {
  const res = await db.query(
    `WITH old AS (
       SELECT hash FROM cli_login_codes
        WHERE expires_at < now() - make_interval(secs => $1)
        ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED)
     DELETE FROM cli_login_codes c USING old WHERE c.hash = old.hash`,
    [a.olderThanSeconds, a.limit],
  );
  return res.rowCount ?? 0;
}
