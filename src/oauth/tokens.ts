// The token endpoint (RFC 6749 §3.2, OAuth 2.1) and revocation (RFC 7009) — docs/design/
// oauth.md, "Tokens". Two grant types: `authorization_code` (PKCE S256 checked, the code
// spent by its first presentation whatever its fate, a replay revoking the grant) and
// `refresh_token` (rotated on every use; a used one presented again revokes the grant: it
// leaked, or the client is confused, and either way the family is no longer trustworthy).
// Access tokens (`sbo_`) last SWITCHBOARD_OAUTH_ACCESS_TOKEN_TTL, refresh tokens (`sbr_`)
// SWITCHBOARD_OAUTH_REFRESH_TOKEN_TTL, neither past the endpoint's expiry; both are stored
// as SHA-256 only. The answer is shaped by the MCP SDK's OAuthTokensSchema.

import { OAuthTokensSchema, type OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { withTx, type Queryable } from '../db/pool.js';
import { hashSecret, newSecret } from '../identity/secrets.js';
import {
  grantOfToken,
  insertTokenPair,
  lockRefreshToken,
  markRotated,
  spendCode,
  type GrantState,
} from '../store/oauth.js';
import { s256 } from './authorize.js';
import { findClient } from './clients.js';
import type { OAuthDeps } from './deps.js';
import { endGrants, type RevokeReason } from './grants.js';
import { OAuthError, oneField } from './errors.js';
import { SCOPE } from './metadata.js';

const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;
const SECRET = /^sb[cor]_[A-Za-z0-9_-]{20,100}$/;

type Form = Record<string, unknown>;

/** The client of a token request: public, so identified by client_id alone (RFC 6749 §3.2.1). */
async function clientOf(deps: OAuthDeps, form: Form) {
  const clientId = oneField(form, 'client_id');
  if (!clientId) throw new OAuthError('invalid_request', 'client_id: required for a public client');
  const client = await findClient(deps, clientId);
  if (!client) throw new OAuthError('invalid_client', 'client_id: no such client is registered here', 401);
  return client;
}

/** A new pair for the grant; neither outlives the endpoint. */
async function issue(deps: OAuthDeps, tx: Queryable, grant: GrantState, now: Date): Promise<OAuthTokens> {
  const end = grant.endpoint_expires_at?.getTime() ?? Infinity;
  const accessUntil = Math.min(now.getTime() + deps.accessTokenTtlSeconds * 1000, end);
  const refreshUntil = Math.min(now.getTime() + deps.refreshTokenTtlSeconds * 1000, end);
  const access = newSecret('sbo');
  const refresh = newSecret('sbr');
  await insertTokenPair(tx, {
    grantId: grant.grant_id,
    access: access.hash,
    accessExpiresAt: new Date(accessUntil),
    refresh: refresh.hash,
    refreshExpiresAt: new Date(refreshUntil),
  });
  return OAuthTokensSchema.parse({
    access_token: access.secret,
    token_type: 'Bearer',
    expires_in: Math.max(1, Math.floor((accessUntil - now.getTime()) / 1000)),
    refresh_token: refresh.secret,
    scope: grant.scope ?? SCOPE,
  });
}

/** What a spend decided: tokens, or an error to answer after the spend is committed. */
type Outcome = { tokens: OAuthTokens } | { error: OAuthError; revoke?: { grantId: string; reason: RevokeReason } };

function checkResource(form: Form, grant: GrantState): OAuthError | null {
  const resource = oneField(form, 'resource');
  if (resource && resource !== grant.resource) {
    return new OAuthError('invalid_target', `resource: this grant is for ${grant.resource}`);
  }
  return null;
}

async function exchangeCode(deps: OAuthDeps, form: Form, now: Date): Promise<OAuthTokens> {
  const client = await clientOf(deps, form);
  const code = oneField(form, 'code');
  const verifier = oneField(form, 'code_verifier');
  const redirectUri = oneField(form, 'redirect_uri');
  if (!code) throw new OAuthError('invalid_request', 'code: required');
  if (!verifier) throw new OAuthError('invalid_request', 'code_verifier: required (PKCE)');
  if (!redirectUri) throw new OAuthError('invalid_request', 'redirect_uri: required');
  if (!SECRET.test(code)) throw new OAuthError('invalid_grant', 'code: unknown');
  const outcome = await withTx(deps.db, async (tx): Promise<Outcome> => {
    const row = await spendCode(tx, hashSecret(code));
    if (!row) return { error: new OAuthError('invalid_grant', 'code: unknown') };
    if (row.used) {
      return {
        error: new OAuthError('invalid_grant', 'code: already used; every token it issued is now revoked'),
        revoke: { grantId: row.grant_id, reason: 'code_replayed' },
      };
    }
    if (row.client_id !== client.id)
      return { error: new OAuthError('invalid_grant', 'code: issued to another client') };
    if (row.expired) return { error: new OAuthError('invalid_grant', 'code: expired') };
    if (row.redirect_uri !== redirectUri) {
      return { error: new OAuthError('invalid_grant', 'redirect_uri: not the one the code was issued for') };
    }
    if (!VERIFIER.test(verifier) || s256(verifier) !== row.code_challenge) {
      return { error: new OAuthError('invalid_grant', 'code_verifier: does not match the code_challenge') };
    }
    const wrongResource = checkResource(form, row);
    if (wrongResource) return { error: wrongResource };
    if (!row.live) return { error: new OAuthError('invalid_grant', 'code: its grant or endpoint is no longer live') };
    return { tokens: await issue(deps, tx, row, now) };
  });
  return settle(deps, outcome);
}

async function refresh(deps: OAuthDeps, form: Form, now: Date): Promise<OAuthTokens> {
  const client = await clientOf(deps, form);
  const token = oneField(form, 'refresh_token');
  if (!token) throw new OAuthError('invalid_request', 'refresh_token: required');
  if (!SECRET.test(token)) throw new OAuthError('invalid_grant', 'refresh_token: unknown');
  const scope = oneField(form, 'scope');
  if (scope && scope.split(' ').some((s) => s !== SCOPE)) {
    throw new OAuthError('invalid_scope', `scope: only "${SCOPE}" was granted`);
  }
  const outcome = await withTx(deps.db, async (tx): Promise<Outcome> => {
    const hash = hashSecret(token);
    const row = await lockRefreshToken(tx, hash);
    if (!row) return { error: new OAuthError('invalid_grant', 'refresh_token: unknown') };
    if (row.client_id !== client.id) {
      return { error: new OAuthError('invalid_grant', 'refresh_token: issued to another client') };
    }
    if (row.used) {
      return {
        error: new OAuthError('invalid_grant', 'refresh_token: already rotated; the grant is now revoked'),
        revoke: { grantId: row.grant_id, reason: 'refresh_reused' },
      };
    }
    if (row.expired) return { error: new OAuthError('invalid_grant', 'refresh_token: expired') };
    if (!row.live) {
      return { error: new OAuthError('invalid_grant', 'refresh_token: its grant or endpoint is no longer live') };
    }
    const wrongResource = checkResource(form, row);
    if (wrongResource) return { error: wrongResource };
    await markRotated(tx, hash);
    return { tokens: await issue(deps, tx, row, now) };
  });
  return settle(deps, outcome);
}

/** After the spend committed: revoke what a replay or reuse condemned, then answer. */
async function settle(deps: OAuthDeps, outcome: Outcome): Promise<OAuthTokens> {
  if ('tokens' in outcome) return outcome.tokens;
  if (outcome.revoke) await endGrants(deps, [outcome.revoke.grantId], outcome.revoke.reason);
  throw outcome.error;
}

/** POST /oauth/token (form-encoded). */
export async function tokenRequest(deps: OAuthDeps, form: Form | undefined, now: Date): Promise<OAuthTokens> {
  const body = form ?? {};
  const grantType = oneField(body, 'grant_type');
  if (grantType === 'authorization_code') return exchangeCode(deps, body, now);
  if (grantType === 'refresh_token') return refresh(deps, body, now);
  if (!grantType) throw new OAuthError('invalid_request', 'grant_type: required');
  throw new OAuthError('unsupported_grant_type', `grant_type: "${grantType}" is not supported`);
}

/**
 * POST /oauth/revoke (RFC 7009): either token of a grant revokes the whole grant, and its
 * sessions close. An unknown token is 200 like a known one (§2.2), so the endpoint is no
 * oracle; a token of another client is refused.
 */
export async function revokeToken(deps: OAuthDeps, form: Form | undefined): Promise<void> {
  const body = form ?? {};
  const client = await clientOf(deps, body);
  const token = oneField(body, 'token');
  if (!token) throw new OAuthError('invalid_request', 'token: required');
  if (!SECRET.test(token)) return;
  const grant = await grantOfToken(deps.db, hashSecret(token));
  if (!grant) return;
  if (grant.client_id !== client.id) {
    throw new OAuthError('unauthorized_client', 'token: was not issued to this client');
  }
  await endGrants(deps, [grant.grant_id], 'client_revoked');
}
