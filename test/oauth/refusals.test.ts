// What the authorization server refuses, each with the RFC's error code and nothing issued
// (docs/design/oauth.md): registrations with redirect URIs it would not honour, authorize
// requests in error (unknown client, unregistered redirect URI, plain PKCE, another
// resource), which are shown on the page and never redirected, since every client here
// registered itself (RFC 9700 §4.11.2),
// and token requests with a wrong redirect URI, a missing or wrong verifier, a replayed code
// (which also revokes what the code issued), an expired code, another resource, a refresh
// after revocation and a rotated refresh token presented again (which revokes the family).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { redirectProblem } from '../../src/oauth/redirect.js';
import { testDatabase } from '../helpers/db.js';
import {
  approvedCode,
  authorize,
  mcpStatus,
  person,
  pkce,
  register,
  REDIRECT,
  request,
  startOAuthServer,
  token,
} from './harness.js';

const db = await testDatabase('oauth_refusals');
const server = await startOAuthServer(db);
const { url } = server;
const alice = await person(db, server);

async function issued(): Promise<number> {
  const res = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_tokens');
  return res.rows[0]?.n ?? 0;
}

/** Exchanges a fresh code of a fresh client for tokens. */
async function tokensFor() {
  const clientId = await register(url);
  const { verifier, challenge } = pkce();
  const code = await approvedCode(url, alice, clientId, challenge);
  const res = await token(url, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    resource: `${url}/mcp`,
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { clientId, code, verifier, tokens: res.body };
}

test('discovery: the protected resource names this server, which offers S256 and public clients only', async () => {
  for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
    const prm = (await (await fetch(url + path)).json()) as Record<string, unknown>;
    assert.equal(prm.resource, `${url}/mcp`);
    assert.deepEqual(prm.authorization_servers, [url]);
  }
  const as = (await (await fetch(`${url}/.well-known/oauth-authorization-server`)).json()) as Record<string, unknown>;
  assert.equal(as.issuer, url);
  assert.equal(as.token_endpoint, `${url}/oauth/token`);
  assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
  assert.deepEqual(as.token_endpoint_auth_methods_supported, ['none']);
  const refused = await mcpStatus(url, 'sbo_' + 'x'.repeat(43));
  assert.equal(refused.status, 401);
  assert.equal(
    refused.challenge,
    `Bearer realm="switchboard", resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"`,
  );
});

test('registration refuses redirect URIs that are not https or loopback http, and confidential clients', async () => {
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ redirect_uris: ['http://evil.example/cb'] }, 'invalid_redirect_uri', /redirect_uris\.0: must be https/],
    [{ redirect_uris: ['com.example.app:/cb'] }, 'invalid_redirect_uri', /redirect_uris\.0/],
    [{ redirect_uris: ['https://app.example/cb#x'] }, 'invalid_redirect_uri', /fragment/],
    [{ redirect_uris: [] }, 'invalid_redirect_uri', /at least one/],
    [{ redirect_uris: ['not a url'] }, 'invalid_redirect_uri', /redirect_uris/],
    [{ redirect_uris: ["https://app.example';script-src*/cb"] }, 'invalid_redirect_uri', /redirect_uris\.0: .*host/],
    [
      { redirect_uris: [REDIRECT], token_endpoint_auth_method: 'client_secret_basic' },
      'invalid_client_metadata',
      /token_endpoint_auth_method/,
    ],
    [{ redirect_uris: [REDIRECT], grant_types: ['client_credentials'] }, 'invalid_client_metadata', /grant_types/],
  ];
  const before = await db.pool.query('SELECT count(*)::int AS n FROM oauth_clients');
  for (const [body, code, description] of cases) {
    const res = await fetch(`${url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await res.json()) as { error: string; error_description: string };
    assert.equal(res.status, 400, JSON.stringify(body));
    assert.equal(answer.error, code, JSON.stringify(body));
    assert.match(answer.error_description, description);
  }
  const after = await db.pool.query('SELECT count(*)::int AS n FROM oauth_clients');
  assert.deepEqual(after.rows, before.rows);
  // A host that is neither LDH labels nor an IP literal is refused: it would reach the
  // consent page's Content-Security-Policy.
  for (const uri of [
    'https://a*b.example/cb',
    'https://app_1.example/cb',
    'https://app.example$/cb',
    "https://x!$&'()*+,;=.example/cb",
    'https://-app.example/cb',
  ]) {
    assert.match(redirectProblem(uri) ?? '', /host/, uri);
  }
  for (const uri of ['https://xn--bcher-kva.example:8443/cb', 'https://192.0.2.1/cb', 'https://[2001:db8::1]/cb']) {
    assert.equal(redirectProblem(uri), null, uri);
  }
  // Loopback http with any port, and https, are fine.
  assert.match(await register(url, 'http://[::1]:4711/cb'), /^oc_/);
  assert.match(await register(url, 'https://app.example/oauth/cb'), /^oc_/);
});

test('authorize: an unknown client or an unregistered redirect URI is shown, never redirected', async () => {
  const clientId = await register(url);
  const { challenge } = pkce();
  for (const params of [
    request(url, clientId, challenge, { redirect_uri: 'http://127.0.0.1:9/elsewhere' }),
    request(url, clientId, challenge, { redirect_uri: 'https://evil.example/callback' }),
    request(url, 'oc_01ZZZZZZZZZZZZZZZZZZZZZZZZ', challenge),
  ]) {
    const res = await authorize(url, alice, params);
    assert.equal(res.status, 400);
    assert.equal(res.location, null);
    assert.match(res.text, /redirect_uri: not one this client registered|client_id: no such client/);
  }
  // The loopback redirect URI with another port is the registered one (RFC 8252 §7.3).
  const otherPort = await authorize(
    url,
    alice,
    request(url, clientId, challenge, { redirect_uri: 'http://127.0.0.1:4242/callback' }),
  );
  assert.equal(otherPort.status, 200);
});

test('authorize: plain PKCE, no challenge, another resource and another scope are shown on the page, never redirected (RFC 9700 §4.11.2)', async () => {
  const clientId = await register(url);
  const { challenge } = pkce();
  const cases: Array<[Record<string, string>, string]> = [
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge: '' }, 'invalid_request'],
    [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
    [{ scope: 'admin' }, 'invalid_scope'],
    [{ response_type: 'token' }, 'unsupported_response_type'],
  ];
  for (const [extra, code] of cases) {
    for (const decision of [undefined, 'approve'] as const) {
      const res = await authorize(url, alice, request(url, clientId, challenge, extra), decision);
      assert.equal(res.status, 400, `${JSON.stringify(extra)} ${decision}`);
      assert.equal(res.location, null, 'a dynamically registered client is not redirected to before consent');
      assert.match(res.text, new RegExp(code), JSON.stringify(extra));
    }
  }
  // Denying answers access_denied.
  const denied = await authorize(url, alice, request(url, clientId, challenge), 'deny');
  assert.equal(new URL(denied.location ?? '').searchParams.get('error'), 'access_denied');
  assert.equal((await db.pool.query('SELECT 1 FROM oauth_grants WHERE client_id = $1', [clientId])).rowCount, 0);
});

test('token: wrong redirect URI, missing or wrong verifier, expired code and another resource issue nothing', async () => {
  const clientId = await register(url);
  const exchange = async (form: Record<string, string>) => {
    const { verifier, challenge } = pkce();
    const code = await approvedCode(url, alice, clientId, challenge);
    return token(url, {
      grant_type: 'authorization_code',
      client_id: clientId,
      code,
      code_verifier: verifier,
      redirect_uri: REDIRECT,
      ...form,
    });
  };
  const before = await issued();
  const cases: Array<[Record<string, string>, string, RegExp]> = [
    [{ redirect_uri: 'http://127.0.0.1:9/other' }, 'invalid_grant', /redirect_uri/],
    [{ code_verifier: '' }, 'invalid_request', /code_verifier: required/],
    [{ code_verifier: pkce().verifier }, 'invalid_grant', /code_verifier: does not match/],
    [{ resource: 'https://other.example/mcp' }, 'invalid_target', /resource/],
    [{ client_id: await register(url) }, 'invalid_grant', /another client/],
    [{ grant_type: 'password' }, 'unsupported_grant_type', /grant_type/],
  ];
  for (const [form, code, description] of cases) {
    const res = await exchange(form);
    assert.equal(res.status, 400, JSON.stringify(form));
    assert.equal(res.body.error, code, JSON.stringify(form));
    assert.match(String(res.body.error_description), description);
    assert.equal(res.body.access_token, undefined);
  }
  // An expired code: its row's expiry moved into the past.
  const { verifier, challenge } = pkce();
  const code = await approvedCode(url, alice, clientId, challenge);
  await db.pool.query(`UPDATE oauth_codes SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`);
  const expired = await token(url, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
  });
  assert.equal(expired.status, 400);
  assert.equal(expired.body.error, 'invalid_grant');
  assert.match(String(expired.body.error_description), /code: expired/);
  const unknownClient = await token(url, {
    grant_type: 'authorization_code',
    client_id: 'oc_01ZZZZZZZZZZZZZZZZZZZZZZZZ',
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
  });
  assert.equal(unknownClient.status, 401);
  assert.equal(unknownClient.body.error, 'invalid_client');
  assert.equal(await issued(), before);
});

test('a replayed code is refused and revokes every token the code issued', async () => {
  const first = await tokensFor();
  assert.equal((await mcpStatus(url, String(first.tokens.access_token))).status, 400);
  const replay = await token(url, {
    grant_type: 'authorization_code',
    client_id: first.clientId,
    code: first.code,
    code_verifier: first.verifier,
    redirect_uri: REDIRECT,
  });
  assert.equal(replay.status, 400);
  assert.equal(replay.body.error, 'invalid_grant');
  assert.match(String(replay.body.error_description), /already used/);
  assert.equal(replay.body.access_token, undefined);
  assert.equal((await mcpStatus(url, String(first.tokens.access_token))).status, 401);
  const refreshed = await token(url, {
    grant_type: 'refresh_token',
    client_id: first.clientId,
    refresh_token: String(first.tokens.refresh_token),
  });
  assert.equal(refreshed.body.error, 'invalid_grant');
});

test('refresh rotates; the rotated token presented again revokes the family; refresh after revoke is refused', async () => {
  const first = await tokensFor();
  const refresh = (refreshToken: string, extra: Record<string, string> = {}) =>
    token(url, { grant_type: 'refresh_token', client_id: first.clientId, refresh_token: refreshToken, ...extra });
  const wrongResource = await refresh(String(first.tokens.refresh_token), { resource: 'https://other.example/mcp' });
  assert.equal(wrongResource.body.error, 'invalid_target');
  assert.equal(wrongResource.body.access_token, undefined);
  // The request's own mistake leaves the refresh token usable.
  assert.equal((await refresh(String(first.tokens.refresh_token), { resource: `${url}/mcp` })).status, 200);
  const second = await tokensFor();
  const rotated = await token(url, {
    grant_type: 'refresh_token',
    client_id: second.clientId,
    refresh_token: String(second.tokens.refresh_token),
  });
  assert.equal(rotated.status, 200);
  assert.notEqual(rotated.body.refresh_token, second.tokens.refresh_token);
  assert.equal((await mcpStatus(url, String(rotated.body.access_token))).status, 400);
  const before = await issued();
  const reused = await token(url, {
    grant_type: 'refresh_token',
    client_id: second.clientId,
    refresh_token: String(second.tokens.refresh_token),
  });
  assert.equal(reused.status, 400);
  assert.equal(reused.body.error, 'invalid_grant');
  assert.match(String(reused.body.error_description), /already rotated/);
  assert.equal(await issued(), before);
  // The whole family is gone: the newest access token and refresh token too.
  assert.equal((await mcpStatus(url, String(rotated.body.access_token))).status, 401);
  const afterReuse = await token(url, {
    grant_type: 'refresh_token',
    client_id: second.clientId,
    refresh_token: String(rotated.body.refresh_token),
  });
  assert.equal(afterReuse.body.error, 'invalid_grant');

  // Revoked through RFC 7009, then refreshed: refused, nothing issued.
  const third = await tokensFor();
  const revoked = await fetch(`${url}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: String(third.tokens.access_token), client_id: third.clientId }).toString(),
  });
  assert.equal(revoked.status, 200);
  const count = await issued();
  const afterRevoke = await token(url, {
    grant_type: 'refresh_token',
    client_id: third.clientId,
    refresh_token: String(third.tokens.refresh_token),
  });
  assert.equal(afterRevoke.status, 400);
  assert.equal(afterRevoke.body.error, 'invalid_grant');
  assert.equal(await issued(), count);
});

test('tokens are stored hashed, and an access token is clamped to its endpoint expiry', async () => {
  const { tokens } = await tokensFor();
  const raw = await db.pool.query(`SELECT 1 FROM oauth_tokens WHERE encode(hash, 'escape') LIKE '%sbo_%'`);
  assert.equal(raw.rowCount, 0);
  assert.equal(tokens.token_type, 'Bearer');
  assert.ok(Number(tokens.expires_in) <= 3600);
  // An endpoint that expires in 10 minutes: its token lasts at most that long.
  await db.pool.query(`UPDATE endpoints SET expires_at = now() + interval '10 minutes' WHERE slug = $1`, [
    alice.endpoint.slug,
  ]);
  const clamped = await tokensFor();
  assert.ok(Number(clamped.tokens.expires_in) <= 600, String(clamped.tokens.expires_in));
  await db.pool.query(`UPDATE endpoints SET expires_at = NULL WHERE slug = $1`, [alice.endpoint.slug]);
});

test('registration is limited per address: past the burst a 429 with Retry-After, in OAuth words, and no client written', async () => {
  const limited = await startOAuthServer(db, {
    SWITCHBOARD_OAUTH_REGISTER_BURST: '2',
    SWITCHBOARD_OAUTH_REGISTER_PER_MINUTE: '1',
  });
  const clients = async () =>
    (await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM oauth_clients')).rows[0]?.n ?? 0;
  await register(limited.url);
  await register(limited.url);
  const before = await clients();
  const res = await fetch(`${limited.url}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      redirect_uris: [REDIRECT],
      client_name: 'one too many',
      token_endpoint_auth_method: 'none',
    }),
  });
  assert.equal(res.status, 429);
  const body = (await res.json()) as { error: string; error_description: string };
  assert.equal(body.error, 'temporarily_unavailable');
  assert.match(body.error_description, /SWITCHBOARD_OAUTH_REGISTER_PER_MINUTE/);
  const retry = Number(res.headers.get('retry-after'));
  assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
  assert.equal(await clients(), before, 'nothing registered');
  // The token endpoint has its own (the API's per-address) bucket: still open.
  const tokenRes = await token(limited.url, { grant_type: 'authorization_code', code: 'nope' });
  assert.equal(tokenRes.status, 400);
});

test('a page on another origin may discover, register and exchange (CORS), and /mcp still refuses that origin', async () => {
  const origin = 'https://inspector.example';
  for (const path of [
    '/.well-known/oauth-protected-resource/mcp',
    '/.well-known/oauth-protected-resource',
    '/.well-known/oauth-authorization-server',
  ]) {
    const res = await fetch(url + path, { headers: { origin } });
    assert.equal(res.status, 200, path);
    assert.equal(res.headers.get('access-control-allow-origin'), '*', path);
  }
  for (const path of ['/oauth/register', '/oauth/token', '/oauth/revoke']) {
    const preflight = await fetch(url + path, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' },
    });
    assert.equal(preflight.status, 204, path);
    assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
    assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /POST/);
    assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /Content-Type/i);
  }
  // An error answer is readable too, with its Retry-After / WWW-Authenticate exposed.
  const refused = await fetch(`${url}/oauth/token`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'grant_type=authorization_code&code=nope',
  });
  assert.equal(refused.status, 400);
  assert.equal(refused.headers.get('access-control-allow-origin'), '*');
  assert.match(refused.headers.get('access-control-expose-headers') ?? '', /WWW-Authenticate/);
  // The resource itself keeps its Origin rule (docs/design/limits.md, "Host and Origin").
  const mcp = await fetch(`${url}/mcp`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  assert.equal(mcp.status, 403);
  assert.equal(mcp.headers.get('access-control-allow-origin'), null);
});
