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
  a: {
    id: string;
    humanId: string;
    kind: TokenKind;
    name: string;
    tokenHash: Buffer;
    expiresAt: Date | null;
    /** Expires this long after now on the database clock (a login token); overrides expiresAt. */
    ttlSeconds?: number;
  },
): Promise<ApiToken> {
  const res = await db.query<ApiToken>(
    `INSERT INTO api_tokens (id, human_id, kind, name, token_hash, expires_at)
     VALUES ($1, $2, $3, $4, $5, CASE WHEN $7::int IS NULL THEN $6::timestamptz ELSE now() + make_interval(secs => $7::int) END)
     RETURNING ${COLUMNS}`,
    [a.id, a.humanId, a.kind, a.name, a.tokenHash, a.expiresAt, a.ttlSeconds ?? null],
  );
  return res.rows[0] as ApiToken;
}

/** What the bearer of a token hash is: the token and its human, expired, or nothing. */
export type TokenLookup = { token: ApiToken; human: Human } | { expired: true } | null;

/**
 * The live token with this hash and its (active) human. A human-kind token's expiry
 * slides: each use pushes it to now + `ttlSeconds` (docs/design/people.md, "Login
 * tokens expire"). Both that and last_used_at are written at most about once a minute
 * (a write per request would make every read a write). A token past its expiry answers
 * `{expired: true}`, so the caller can say "sign in again" rather than "unknown".
 */
export async function authenticateApiToken(db: Queryable, tokenHash: Buffer, ttlSeconds: number): Promise<TokenLookup> {
  const res = await db.query<ApiToken & { human: Human; expired: boolean }>(
    `WITH t AS (
       SELECT api_tokens.*, (expires_at IS NOT NULL AND expires_at <= now()) AS expired FROM api_tokens
        WHERE token_hash = $1 AND revoked_at IS NULL),
     touched AS (
       UPDATE api_tokens SET last_used_at = now(),
              expires_at = CASE WHEN t.kind = 'human' THEN now() + make_interval(secs => $2) ELSE t.expires_at END
         FROM t
        WHERE api_tokens.id = t.id AND NOT t.expired
          AND (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute'
               OR (t.kind = 'human' AND (t.expires_at IS NULL
                   OR t.expires_at < now() + make_interval(secs => $2) - interval '1 minute'
                   OR t.expires_at > now() + make_interval(secs => $2))))
        RETURNING api_tokens.id, api_tokens.expires_at)
     SELECT t.id, t.kind, t.name, t.created_at, t.last_used_at, coalesce(touched.expires_at, t.expires_at) AS expires_at,
            t.revoked_at, t.expired,
            json_build_object('id', h.id, 'email', h.email, 'display_name', h.display_name,
                              'role', h.role, 'state', h.state, 'created_at', h.created_at) AS human
       FROM t JOIN humans h ON h.id = t.human_id AND h.state = 'active' LEFT JOIN touched ON touched.id = t.id`,
    [tokenHash, ttlSeconds],
  );
  const row = res.rows[0];
  if (!row) return null;
  const { human, expired, ...token } = row;
  if (expired) return { expired: true };
  return { token, human: { ...human, created_at: new Date(human.created_at) } };
}

export async function listApiTokens(db: Queryable, humanId: string): Promise<ApiToken[]> {
  const res = await db.query<ApiToken>(
    `SELECT ${COLUMNS} FROM api_tokens WHERE human_id = $1 ORDER BY created_at DESC, id DESC`,
    [humanId],
  );
  return res.rows;
}

/** Revokes one of this human's tokens; null when it is not theirs (or unknown). Revoking twice keeps the first instant. */
export async function revokeApiToken(db: Queryable, humanId: string, id: string): Promise<ApiToken | null> {
  const res = await db.query<ApiToken>(
    `UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
      WHERE human_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
    [humanId, id],
  );
  return res.rows[0] ?? null;
}

/**
 * Live (unrevoked, unexpired) tokens per human, for the board's people list: one grouped
 * read over the live tokens, whose number the per-human token quota bounds.
 */
export async function countLiveApiTokens(db: Queryable): Promise<Map<string, number>> {
  const res = await db.query<{ human_id: string; n: number }>(
    `SELECT human_id, count(*)::int AS n FROM api_tokens
      WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
      GROUP BY human_id`,
  );
  return new Map(res.rows.map((r) => [r.human_id, r.n]));
}
