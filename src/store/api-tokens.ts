// API tokens: hashed bearer secrets of kind human (acts as the human) or workflow
// (automation: may only push work). Scoped by the owning human everywhere but the
// authentication lookup, which is by hash.

import type { Queryable } from '../db/pool.js';
import type { Human } from './humans.js';

export type TokenKind = 'human' | 'workflow';

export interface ApiToken {
  id: string;
  kind: TokenKind;
  name: string;
  created_at: Date;
  last_used_at: Date | null;
  expires_at: Date | null;
  revoked_at: Date | null;
}

const COLUMNS = 'id, kind, name, created_at, last_used_at, expires_at, revoked_at';

export async function insertApiToken(
  db: Queryable,
  a: { id: string; humanId: string; kind: TokenKind; name: string; tokenHash: Buffer; expiresAt: Date | null },
): Promise<ApiToken> {
  const res = await db.query<ApiToken>(
    `INSERT INTO api_tokens (id, human_id, kind, name, token_hash, expires_at) VALUES ($1, $2, $3, $4, $5, $6)
     RETURNING ${COLUMNS}`,
    [a.id, a.humanId, a.kind, a.name, a.tokenHash, a.expiresAt],
  );
  return res.rows[0] as ApiToken;
}

/**
 * The live token with this hash and its human, stamping last_used_at at most once a
 * minute (a write per request would make every read a write).
 */
export async function authenticateApiToken(
  db: Queryable,
  tokenHash: Buffer,
): Promise<{ token: ApiToken; human: Human } | null> {
  const res = await db.query<ApiToken & { human: Human }>(
    `WITH t AS (
       SELECT * FROM api_tokens
        WHERE token_hash = $1 AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())),
     touched AS (
       UPDATE api_tokens SET last_used_at = now() FROM t
        WHERE api_tokens.id = t.id AND (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute'))
     SELECT t.id, t.kind, t.name, t.created_at, t.last_used_at, t.expires_at, t.revoked_at,
            json_build_object('id', h.id, 'email', h.email, 'display_name', h.display_name,
                              'role', h.role, 'created_at', h.created_at) AS human
       FROM t JOIN humans h ON h.id = t.human_id`,
    [tokenHash],
  );
  const row = res.rows[0];
  if (!row) return null;
  const { human, ...token } = row;
  return { token, human: { ...human, created_at: new Date(human.created_at) } };
}

export async function listApiTokens(db: Queryable, humanId: string): Promise<ApiToken[]> {
  const res = await db.query<ApiToken>(
    `SELECT ${COLUMNS} FROM api_tokens WHERE human_id = $1 ORDER BY created_at DESC, id DESC`,
    [humanId],
  );
  return res.rows;
}

/** Revokes one of this human's tokens; null when it is not theirs (or unknown). */
export async function revokeApiToken(db: Queryable, humanId: string, id: string): Promise<ApiToken | null> {
  const res = await db.query<ApiToken>(
    `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
      WHERE human_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [humanId, id],
  );
  return res.rows[0] ?? null;
}
