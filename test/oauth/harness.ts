// The OAuth tests' harness: a real HTTP app (every surface, as `serve` builds it) on a
// loopback port chosen first, so SWITCHBOARD_PUBLIC_URL — which every OAuth URL and the
// resource indicator are built from — is the URL the client really talks to; the
// LISTEN/NOTIFY bus, so a revocation is heard as another instance would hear it; humans
// with passwords; the MCP SDK's own OAuth client provider; and helpers that drive the
// consent form as a signed-in browser without JavaScript would.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { after } from 'node:test';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { NotifyBus } from '../../src/db/bus.js';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { signIn } from '../../src/identity/board-sessions.js';
import type { Services } from '../../src/services.js';
import { human, PASSWORD } from '../board/harness.js';
import type { TestDatabase } from '../helpers/db.js';
import { testApp, testServices } from '../helpers/services.js';

/** A loopback port free right now, for a server whose URL must be known before it starts. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export interface OAuthServer {
  url: string;
  services: Services;
}

/** The server under test, its public URL its own listening address. */
export async function startOAuthServer(db: TestDatabase, env: Record<string, string> = {}): Promise<OAuthServer> {
  const bus = new NotifyBus({ url: db.url });
  await bus.start();
  after(() => bus.stop());
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const services = await testServices({
    pool: db.pool,
    instanceId: 'oauth-test',
    bus,
    env: { SWITCHBOARD_PUBLIC_URL: url, ...env },
  });
  const app = testApp(services);
  await app.listen({ host: '127.0.0.1', port });
  after(() => app.close());
  return { url, services };
}

/** A human with a password, an endpoint of theirs, and a board session (cookie and CSRF token). */
export async function person(db: TestDatabase, server: OAuthServer, role: 'admin' | 'member' = 'member') {
  const who = await human(db, role);
  const deps = { db: db.pool, publicUrl: server.url };
  const vended = await vendEndpoint(
    deps,
    who.id,
    { name: `agent ${who.id.slice(-6)}`, queues: ['inbox', 'ops'] },
    new Date(),
  );
  const session = await signIn(deps, who.email, PASSWORD);
  return {
    ...who,
    endpoint: vended.endpoint,
    credential: vended.credential,
    cookie: `sb_session=${session.cookie}`,
    csrf: session.csrf,
  };
}

/** The MCP SDK's client side of OAuth, holding what it is given in memory. */
export class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;

  constructor(readonly redirect: string) {}

  get redirectUrl(): string {
    return this.redirect;
  }

  get clientMetadata(): OAuthClientMetadata {
    return {
      redirect_uris: [this.redirect],
      client_name: 'Test agent',
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    };
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }

  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }

  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }

  codeVerifier() {
    return this.verifier;
  }
}

/** A PKCE pair: a verifier and its S256 challenge. */
export function pkce(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export const REDIRECT = 'http://127.0.0.1:9/callback';

/** Registers a public client (RFC 7591) with this redirect URI. */
export async function register(url: string, redirect = REDIRECT): Promise<string> {
  const res = await fetch(`${url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: [redirect], client_name: 'Raw client', token_endpoint_auth_method: 'none' }),
  });
  assert.equal(res.status, 201, await res.clone().text());
  return ((await res.json()) as { client_id: string }).client_id;
}

export type Who = { cookie: string; csrf: string; endpoint: { slug: string } };

/** GET or POST /oauth/authorize as the signed-in person; redirects are not followed. */
export async function authorize(
  url: string,
  who: Who,
  params: Record<string, string>,
  decision?: 'approve' | 'deny',
): Promise<{ status: number; location: string | null; text: string }> {
  const res = decision
    ? await fetch(`${url}/oauth/authorize`, {
        method: 'POST',
        headers: { cookie: who.cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...params, csrf: who.csrf, decision, endpoint: who.endpoint.slug }).toString(),
        redirect: 'manual',
      })
    : await fetch(`${url}/oauth/authorize?${new URLSearchParams(params).toString()}`, {
        headers: { cookie: who.cookie },
        redirect: 'manual',
      });
  return { status: res.status, location: res.headers.get('location'), text: await res.text() };
}

/** The usual authorization request of a client for this server's /mcp. */
export function request(url: string, clientId: string, challenge: string, extra: Record<string, string> = {}) {
  return {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    state: 'st-1',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${url}/mcp`,
    ...extra,
  };
}

/** Approves on the consent form and returns the code the client is sent back with. */
export async function approvedCode(url: string, who: Who, clientId: string, challenge: string): Promise<string> {
  const res = await authorize(url, who, request(url, clientId, challenge), 'approve');
  assert.equal(res.status, 303, res.text);
  const back = new URL(res.location ?? '');
  assert.equal(back.searchParams.get('state'), 'st-1');
  assert.equal(back.searchParams.get('iss'), url);
  const code = back.searchParams.get('code');
  assert.ok(code?.startsWith('sbc_'), res.location ?? '');
  return code ?? '';
}

/** POST /oauth/token with this form. */
export async function token(url: string, form: Record<string, string>) {
  const res = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & Partial<OAuthTokens> };
}

/**
 * A tools/list with this bearer and no session: a live bearer gets past authentication to
 * 400 (a session is required), a dead one is 401 with the bearer challenge. Opens nothing.
 */
export async function mcpStatus(url: string, bearer: string): Promise<{ status: number; challenge: string | null }> {
  const res = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bearer}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  await res.body?.cancel();
  return { status: res.status, challenge: res.headers.get('www-authenticate') };
}
