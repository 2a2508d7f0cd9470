// Who is calling the operator API: a human, through an API token (human or workflow
// kind) or a board session, or the synthetic admin when auth is off.

import type { Pool } from '../db/pool.js';
import type { ApiToken, TokenKind } from '../store/api-tokens.js';
import { authenticateApiToken } from '../store/api-tokens.js';
import type { Human } from '../store/humans.js';
import { hashSecret } from './secrets.js';

export type { Human, HumanState, Role } from '../store/humans.js';
export type { ApiToken, TokenKind } from '../store/api-tokens.js';
export type { HumanAuditEntry } from '../store/human-lifecycle.js';

export interface Principal {
  human: Human;
  /** The API token used, or null for a board session or the synthetic admin. */
  token: { id: string; kind: TokenKind; name: string; expires_at: Date | null } | null;
}

export interface IdentityDeps {
  db: Pool;
  publicUrl: string;
  /**
   * The credential answers this process reuses: disabling a human drops their endpoints'
   * at once here (the bus tells the other instances).
   */
  credentials?: { forget(endpointId: string): void };
  /**
   * false with SWITCHBOARD_PASSWORD_SIGNIN=off: sign-in by password is refused (board and
   * API) and people use the OIDC button (docs/design/oauth.md, "Human sign-in through
   * OIDC"). Unset: on.
   */
  passwordSignIn?: boolean;
}

/** What reads and mints login tokens needs besides: their sliding lifetime. */
export interface TokenDeps extends IdentityDeps {
  /** SWITCHBOARD_TOKEN_TTL in seconds: how long a login token lives after its last use. */
  tokenTtlSeconds: number;
}

/**
 * Resolves an `sbt_` bearer token; null for anything unknown, revoked or of a disabled
 * human, `expired` for a token past its expiry (the caller says to sign in again).
 */
export async function principalForToken(deps: TokenDeps, bearer: string): Promise<Principal | 'expired' | null> {
  if (!bearer.startsWith('sbt_')) return null;
  const found = await authenticateApiToken(deps.db, hashSecret(bearer), deps.tokenTtlSeconds);
  if (!found) return null;
  if ('expired' in found) return 'expired';
  return { human: found.human, token: tokenRef(found.token) };
}

export function tokenRef(token: ApiToken): Principal['token'] {
  return { id: token.id, kind: token.kind, name: token.name, expires_at: token.expires_at };
}
