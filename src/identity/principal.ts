// Who is calling the operator API: a human, through an API token (human or workflow
// kind) or a board session, or the synthetic admin when auth is off.

import type { Pool } from '../db/pool.js';
import type { ApiToken, TokenKind } from '../store/api-tokens.js';
import { authenticateApiToken } from '../store/api-tokens.js';
import type { Human } from '../store/humans.js';
import { hashSecret } from './secrets.js';

export type { Human, Role } from '../store/humans.js';
export type { ApiToken, TokenKind } from '../store/api-tokens.js';

export interface Principal {
  human: Human;
  /** The API token used, or null for a board session or the synthetic admin. */
  token: { id: string; kind: TokenKind; name: string } | null;
}

export interface IdentityDeps {
  db: Pool;
  publicUrl: string;
}

/** Resolves an `sbt_` bearer token; null for anything unknown, revoked or expired. */
export async function principalForToken(deps: IdentityDeps, bearer: string): Promise<Principal | null> {
  if (!bearer.startsWith('sbt_')) return null;
  const found = await authenticateApiToken(deps.db, hashSecret(bearer));
  if (!found) return null;
  return { human: found.human, token: tokenRef(found.token) };
}

export function tokenRef(token: ApiToken): Principal['token'] {
  return { id: token.id, kind: token.kind, name: token.name };
}
