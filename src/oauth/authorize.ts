// The authorization endpoint's use cases (docs/design/oauth.md, "Consent"): check a request
// (RFC 6749 §4.1.1 with OAuth 2.1's PKCE S256 and RFC 8707's resource), list what the
// signed-in human may grant, and turn an approval into a grant and a single-use code, or a
// denial into `access_denied`. A grant names one of the human's live endpoints — or one
// vended in place through the vend use case — and the token acts as exactly that endpoint:
// its queues and verbs, no more (OAuth never widens a grant).

import { createHash } from 'node:crypto';
import { endpointState } from '../domain/endpoint.js';
import { newId } from '../domain/ids.js';
import { listEndpoints, resolveEndpoint, vendEndpoint, type EndpointView } from '../endpoints/manage.js';
import { newSecret } from '../identity/secrets.js';
import { insertGrantWithCode, type OAuthClient } from '../store/oauth.js';
import { findClient } from './clients.js';
import type { OAuthDeps } from './deps.js';
import { OAuthError, oneField } from './errors.js';
import { resourceUrl, SCOPE } from './metadata.js';
import { redirectMatches, redirectProblem } from './redirect.js';

/**
 * How long a code may wait for its exchange. RFC 6749 §4.1.2 advises at most ten minutes;
 * a client exchanges it within a second of the redirect, so one minute is ample and keeps
 * a leaked code's window short. A protocol constant, not an operator's choice.
 */
export const CODE_TTL_MS = 60_000;

/** A checked authorization request: what the consent page shows and the approval binds. */
export interface AuthorizeRequest {
  client: OAuthClient;
  redirectUri: string;
  state: string | null;
  codeChallenge: string;
  resource: string;
  scope: string | null;
}

/**
 * A checked request, or the error shown to the human on the page. Never an error redirect
 * to the client (RFC 6749 §4.1.2.1): every client here registered itself, with redirect
 * URIs nobody vetted, so before the human has seen the consent page a redirect to one
 * would make this server an open redirector (RFC 9700 §4.11.2). Only the human's own
 * answer (approve, deny) goes back to the client.
 */
export type AuthorizeCheck = { ok: true; request: AuthorizeRequest } | { ok: false; message: string };

/** The redirect URI with these parameters added to its query (state and iss always, RFC 9207). */
export function redirectWith(
  publicUrl: string,
  redirectUri: string,
  state: string | null,
  params: Record<string, string>,
): string {
  const url = new URL(redirectUri);
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value);
  if (state !== null) url.searchParams.set('state', state);
  url.searchParams.set('iss', publicUrl);
  return url.href;
}

const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
const MAX_STATE = 1000;

/** Checks GET /oauth/authorize's query (and the consent form's echo of it). */
export async function checkAuthorize(deps: OAuthDeps, params: Record<string, unknown>): Promise<AuthorizeCheck> {
  let clientId: string;
  let requested: string;
  try {
    clientId = oneField(params, 'client_id');
    requested = oneField(params, 'redirect_uri');
  } catch (err) {
    return { ok: false, message: (err as Error).message };
  }
  if (!clientId) return { ok: false, message: 'client_id: required' };
  const client = await findClient(deps, clientId);
  if (!client) return { ok: false, message: 'client_id: no such client is registered here' };
  let redirectUri = requested;
  if (!redirectUri) {
    if (client.redirect_uris.length !== 1) return { ok: false, message: 'redirect_uri: required' };
    redirectUri = client.redirect_uris[0] as string;
  } else if (!redirectMatches(client.redirect_uris, redirectUri)) {
    return { ok: false, message: 'redirect_uri: not one this client registered' };
  }
  // A client registered before hosts were checked keeps what it registered: not used.
  const problem = redirectProblem(redirectUri);
  if (problem) return { ok: false, message: `redirect_uri: ${problem}; the client must register again` };
  const refuse = (code: string, description: string): AuthorizeCheck => ({
    ok: false,
    message: `${description} (${code})`,
  });
  try {
    const state = oneField(params, 'state') || null;
    if (state !== null && state.length > MAX_STATE) {
      return refuse('invalid_request', `state: must be at most ${MAX_STATE} characters`);
    }
    const responseType = oneField(params, 'response_type');
    if (responseType !== 'code') {
      return refuse('unsupported_response_type', 'response_type: must be "code"');
    }
    const challenge = oneField(params, 'code_challenge');
    const method = oneField(params, 'code_challenge_method');
    if (!challenge) return refuse('invalid_request', 'code_challenge: required (PKCE)');
    if (method !== 'S256') return refuse('invalid_request', 'code_challenge_method: must be S256');
    if (!CHALLENGE.test(challenge)) {
      return refuse('invalid_request', 'code_challenge: must be the base64url SHA-256 of the verifier');
    }
    const resource = oneField(params, 'resource') || resourceUrl(deps.publicUrl);
    if (resource !== resourceUrl(deps.publicUrl)) {
      return refuse('invalid_target', `resource: this server issues tokens for ${resourceUrl(deps.publicUrl)} only`);
    }
    const scope = oneField(params, 'scope') || null;
    if (scope !== null && scope.split(' ').some((s) => s !== SCOPE)) {
      return refuse('invalid_scope', `scope: only "${SCOPE}" is offered`);
    }
    return { ok: true, request: { client, redirectUri, state, codeChallenge: challenge, resource, scope } };
  } catch (err) {
    if (!(err instanceof OAuthError)) throw err;
    return refuse(err.code, err.message);
  }
}

/** The human's endpoints a client may act as: the live ones, with their queues and verbs. */
export async function grantableEndpoints(deps: OAuthDeps, humanId: string, now: Date): Promise<EndpointView[]> {
  return (await listEndpoints(deps, humanId, now)).filter((e) => e.state === 'active');
}

/** What the human chose on the consent page. */
export type Choice = { endpoint: string } | { vend: { name: string; queues: string[] } };

/**
 * Approves: the grant and its code (stored hashed), then the redirect that hands the code
 * to the client. The endpoint must be the human's and live; a vend goes through the vend
 * use case (its quota and checks), and its `sbk_` credential is never shown — the client's
 * tokens are its credential.
 */
export async function approve(
  deps: OAuthDeps,
  humanId: string,
  request: AuthorizeRequest,
  choice: Choice,
  now: Date,
): Promise<{ redirect: string; endpointSlug: string }> {
  let endpoint: { id: string; slug: string };
  if ('vend' in choice) {
    endpoint = (await vendEndpoint(deps, humanId, choice.vend, now)).endpoint;
  } else {
    const found = await resolveEndpoint(deps, humanId, choice.endpoint);
    if (endpointState(found, now) !== 'active') {
      throw new OAuthError('invalid_request', 'endpoint: is revoked or expired; pick a live one');
    }
    endpoint = found;
  }
  const code = newSecret('sbc');
  await insertGrantWithCode(deps.db, {
    grantId: newId('og'),
    clientId: request.client.id,
    endpointId: endpoint.id,
    humanId,
    resource: request.resource,
    scope: request.scope,
    codeHash: code.hash,
    redirectUri: request.redirectUri,
    codeChallenge: request.codeChallenge,
    codeExpiresAt: new Date(now.getTime() + CODE_TTL_MS),
  });
  return {
    redirect: redirectWith(deps.publicUrl, request.redirectUri, request.state, { code: code.secret }),
    endpointSlug: endpoint.slug,
  };
}

/** Denies: the client hears `access_denied` at its redirect URI. */
export function deny(deps: Pick<OAuthDeps, 'publicUrl'>, request: AuthorizeRequest): string {
  return redirectWith(deps.publicUrl, request.redirectUri, request.state, {
    error: 'access_denied',
    error_description: 'the person declined',
  });
}

/** PKCE S256 (RFC 7636 §4.6): BASE64URL(SHA256(verifier)). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url');
}
