// Dynamic client registration (RFC 7591) for public clients only (docs/design/oauth.md,
// "Clients"): no client secret is ever issued, so `token_endpoint_auth_method` is `none`
// and PKCE is what binds a code to the client that asked for it. The metadata is read with
// the MCP SDK's OAuthClientMetadataSchema; what this server adds is the redirect URI rule
// (redirect.ts) and the refusal of anything it would not honour.

import { OAuthClientMetadataSchema } from '@modelcontextprotocol/sdk/shared/auth.js';
import { newId } from '../domain/ids.js';
import { getClient, insertClient, type OAuthClient } from '../store/oauth.js';
import type { OAuthDeps } from './deps.js';
import { OAuthError } from './errors.js';
import { SCOPE } from './metadata.js';
import { redirectProblem } from './redirect.js';

/** Bounds on what one public registration may store. */
const MAX_REDIRECT_URIS = 10;
const MAX_TEXT = 200;
const GRANT_TYPES = ['authorization_code', 'refresh_token'];

function text(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && value.length > MAX_TEXT) {
    throw new OAuthError('invalid_client_metadata', `${name}: must be at most ${MAX_TEXT} characters`);
  }
  return value;
}

/** POST /oauth/register: the client's information (RFC 7591 §3.2.1). */
export async function registerClient(deps: Pick<OAuthDeps, 'db'>, body: unknown) {
  const parsed = OAuthClientMetadataSchema.safeParse(body ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || 'body';
    const code = where.startsWith('redirect_uris') ? 'invalid_redirect_uri' : 'invalid_client_metadata';
    throw new OAuthError(code, `${where}: ${issue?.message ?? 'invalid'}`);
  }
  const m = parsed.data;
  if (m.redirect_uris.length === 0) throw new OAuthError('invalid_redirect_uri', 'redirect_uris: name at least one');
  if (m.redirect_uris.length > MAX_REDIRECT_URIS) {
    throw new OAuthError('invalid_redirect_uri', `redirect_uris: at most ${MAX_REDIRECT_URIS}`);
  }
  m.redirect_uris.forEach((uri, i) => {
    const problem = redirectProblem(uri);
    if (problem) throw new OAuthError('invalid_redirect_uri', `redirect_uris.${i}: ${problem}`);
  });
  const method = m.token_endpoint_auth_method ?? 'none';
  if (method !== 'none') {
    throw new OAuthError(
      'invalid_client_metadata',
      'token_endpoint_auth_method: only "none" (a public client with PKCE) is supported',
    );
  }
  const grantTypes = m.grant_types ?? GRANT_TYPES;
  const badGrant = grantTypes.find((g) => !GRANT_TYPES.includes(g));
  if (badGrant) throw new OAuthError('invalid_client_metadata', `grant_types: "${badGrant}" is not supported`);
  const responseTypes = m.response_types ?? ['code'];
  if (responseTypes.some((r) => r !== 'code')) {
    throw new OAuthError('invalid_client_metadata', 'response_types: only "code" is supported');
  }
  if (m.scope !== undefined && m.scope.split(' ').some((s) => s !== SCOPE)) {
    throw new OAuthError('invalid_client_metadata', `scope: only "${SCOPE}" is offered`);
  }
  const metadata = {
    redirect_uris: m.redirect_uris,
    token_endpoint_auth_method: 'none',
    grant_types: grantTypes,
    response_types: responseTypes,
    ...(m.client_name !== undefined ? { client_name: text('client_name', m.client_name) } : {}),
    ...(m.client_uri !== undefined ? { client_uri: text('client_uri', m.client_uri) } : {}),
    ...(m.software_id !== undefined ? { software_id: text('software_id', m.software_id) } : {}),
    ...(m.software_version !== undefined ? { software_version: text('software_version', m.software_version) } : {}),
    scope: SCOPE,
  };
  const client = await insertClient(deps.db, {
    id: newId('oc'),
    clientName: metadata.client_name ?? null,
    redirectUris: m.redirect_uris,
    metadata,
  });
  return {
    client_id: client.id,
    client_id_issued_at: Math.floor(client.created_at.getTime() / 1000),
    ...metadata,
  };
}

/** A registered client by id, or null (an id of the wrong shape is never looked up). */
export async function findClient(deps: Pick<OAuthDeps, 'db'>, clientId: string): Promise<OAuthClient | null> {
  if (!/^oc_[0-9A-Z]{26}$/.test(clientId)) return null;
  return getClient(deps.db, clientId);
}
