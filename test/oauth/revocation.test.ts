// Revocation ends an OAuth client's tokens and its live MCP sessions at once
// (docs/design/oauth.md, "Revocation"): the person revoking the client on the endpoint's
// page, the endpoint being revoked, and the human being disabled by an admin. Each is driven
// through the board's own forms; each time the access token is refused at /mcp, the
// refresh token buys nothing, the session is closed and the notification stream this
// instance held for it ends (heard over LISTEN/NOTIFY, as another instance would hear it).
// An admin's reset for a compromised account ends the grants and the endpoint credentials
// too, when asked; a plain reset ends neither (docs/design/people.md, "Passwords and links").

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { boardRequest } from '../board/harness.js';
import { testDatabase } from '../helpers/db.js';
import { approvedCode, mcpStatus, person, pkce, register, REDIRECT, startOAuthServer, token } from './harness.js';

const db = await testDatabase('oauth_revocation');
const server = await startOAuthServer(db);
const { url } = server;
const admin = await person(db, server, 'admin');

/** Polls a condition the server reaches on its own (a NOTIFY heard); fails after a generous bound. */
async function eventually(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await sleep(25);
  }
  assert.fail(`never: ${what}`);
}

/** A client authorized by `who` as their endpoint, connected over MCP with its notification stream open. */
async function connected(who: Awaited<ReturnType<typeof person>>) {
  const clientId = await register(url);
  const { verifier, challenge } = pkce();
  const code = await approvedCode(url, who, clientId, challenge);
  const issued = await token(url, {
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
  });
  assert.equal(issued.status, 200);
  const access = String(issued.body.access_token);
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', url), {
    requestInit: { headers: { Authorization: `Bearer ${access}` } },
  });
  const client = new Client({ name: 'revocation', version: '1.0.0' });
  await client.connect(transport);
  const sessionId = transport.sessionId ?? '';
  await eventually('the notification stream opens', async () => {
    const res = await db.pool.query(`SELECT stream_open FROM mcp_sessions WHERE id = $1`, [sessionId]);
    return res.rows[0]?.stream_open === true;
  });
  assert.equal(server.services.streams.count(), 1);
  return { client, clientId, access, refresh: String(issued.body.refresh_token), sessionId };
}

async function assertEnded(c: Awaited<ReturnType<typeof connected>>) {
  assert.equal((await mcpStatus(url, c.access)).status, 401);
  const refreshed = await token(url, { grant_type: 'refresh_token', client_id: c.clientId, refresh_token: c.refresh });
  assert.equal(refreshed.body.error, 'invalid_grant');
  const row = await db.pool.query(`SELECT closed_at, stream_open FROM mcp_sessions WHERE id = $1`, [c.sessionId]);
  assert.ok(row.rows[0]?.closed_at, 'the session is closed');
  await eventually('the stream this instance held ends', () => server.services.streams.count() === 0);
  await c.client.close();
}

test('revoking the client on the endpoint page ends its tokens and live session, and leaves other clients be', async () => {
  const alice = await person(db, server);
  const c = await connected(alice);
  const other = await register(url);
  const { verifier, challenge } = pkce();
  const otherTokens = await token(url, {
    grant_type: 'authorization_code',
    client_id: other,
    code: await approvedCode(url, alice, other, challenge),
    code_verifier: verifier,
    redirect_uri: REDIRECT,
  });
  const grant = await db.pool.query<{ id: string }>(`SELECT id FROM oauth_grants WHERE client_id = $1`, [c.clientId]);
  const page = await boardRequest(url, 'GET', `/endpoints/${alice.endpoint.slug}`, alice.cookie);
  assert.match(page.text, /Authorized clients/);
  assert.match(page.text, new RegExp(`/clients/${grant.rows[0]?.id}/revoke`));
  // Another human cannot revoke it: 404, like an unknown grant.
  const bob = await person(db, server);
  const foreign = await boardRequest(
    url,
    'POST',
    `/endpoints/${bob.endpoint.slug}/clients/${grant.rows[0]?.id}/revoke`,
    bob.cookie,
    { csrf: bob.csrf },
  );
  assert.equal(foreign.status, 404);
  assert.equal((await mcpStatus(url, c.access)).status, 400);
  const res = await boardRequest(
    url,
    'POST',
    `/endpoints/${alice.endpoint.slug}/clients/${grant.rows[0]?.id}/revoke`,
    alice.cookie,
    { csrf: alice.csrf },
  );
  assert.equal(res.status, 303);
  await assertEnded(c);
  assert.equal((await mcpStatus(url, String(otherTokens.body.access_token))).status, 400, 'another client still works');
  // The sbk_ credential of the endpoint is untouched.
  assert.equal((await mcpStatus(url, alice.credential)).status, 400);
});

test('revoking the endpoint ends its OAuth tokens and live sessions', async () => {
  const alice = await person(db, server);
  const c = await connected(alice);
  const res = await boardRequest(url, 'POST', `/endpoints/${alice.endpoint.slug}/revoke`, alice.cookie, {
    csrf: alice.csrf,
  });
  assert.equal(res.status, 303);
  await assertEnded(c);
  const grants = await db.pool.query(`SELECT revoked_reason FROM oauth_grants WHERE client_id = $1`, [c.clientId]);
  assert.deepEqual(grants.rows, [{ revoked_reason: 'endpoint_revoked' }]);
});

test('disabling the human ends their OAuth tokens and live sessions, and enabling does not bring them back', async () => {
  const alice = await person(db, server);
  const c = await connected(alice);
  const off = await boardRequest(url, 'POST', `/people/${alice.id}/state`, admin.cookie, {
    csrf: admin.csrf,
    state: 'disabled',
  });
  assert.equal(off.status, 303);
  await assertEnded(c);
  const on = await boardRequest(url, 'POST', `/people/${alice.id}/state`, admin.cookie, {
    csrf: admin.csrf,
    state: 'active',
  });
  assert.equal(on.status, 303);
  assert.equal((await mcpStatus(url, c.access)).status, 401);
});

test('a plain reset leaves grants and credentials be; one for a compromised account ends both at once', async () => {
  const alice = await person(db, server);
  const c = await connected(alice);
  const plain = await boardRequest(url, 'POST', `/people/${alice.id}/reset`, admin.cookie, { csrf: admin.csrf });
  assert.equal(plain.status, 201);
  assert.doesNotMatch(plain.text, /data-slot="reset-ended"/);
  assert.equal((await mcpStatus(url, c.access)).status, 400, 'the OAuth token still works');
  assert.equal((await mcpStatus(url, alice.credential)).status, 400, 'the credential still works');

  const people = await boardRequest(url, 'GET', '/people', admin.cookie);
  assert.match(people.text, /name="revoke_oauth_grants"/);
  assert.match(people.text, /name="rotate_endpoint_credentials"/);
  const res = await boardRequest(url, 'POST', `/people/${alice.id}/reset`, admin.cookie, {
    csrf: admin.csrf,
    revoke_oauth_grants: 'on',
    rotate_endpoint_credentials: 'on',
  });
  assert.equal(res.status, 201);
  assert.match(res.text, /OAuth grants revoked: 1 \(MCP sessions closed: 1\)/);
  assert.match(res.text, /Endpoint credentials replaced: 1;/);
  await assertEnded(c);
  assert.equal((await mcpStatus(url, alice.credential)).status, 401, 'the old credential is refused at once, no grace');
  const grants = await db.pool.query(`SELECT revoked_reason FROM oauth_grants WHERE client_id = $1`, [c.clientId]);
  assert.deepEqual(grants.rows, [{ revoked_reason: 'by_admin' }]);
  const endpoint = await db.pool.query(
    `SELECT slug, previous_credential_hash, revoked_at FROM endpoints WHERE id = $1`,
    [alice.endpoint.id],
  );
  assert.deepEqual(endpoint.rows, [{ slug: alice.endpoint.slug, previous_credential_hash: null, revoked_at: null }]);
  const audit = await db.pool.query(
    `SELECT detail FROM human_audit WHERE human_id = $1 AND action = 'reset' ORDER BY id DESC LIMIT 1`,
    [alice.id],
  );
  assert.deepEqual(
    {
      grants: audit.rows[0]?.detail.oauth_grants_revoked,
      sessions: audit.rows[0]?.detail.sessions_closed,
      credentials: audit.rows[0]?.detail.endpoint_credentials_rotated,
    },
    { grants: 1, sessions: 1, credentials: 1 },
  );
  // The owner, signed in again, rotates for a credential they can see, on the same slug.
  const rotated = await boardRequest(url, 'POST', `/endpoints/${alice.endpoint.slug}/rotate`, alice.cookie, {
    csrf: alice.csrf,
  });
  assert.equal(rotated.status, 200);
  const fresh = /sbk_[A-Za-z0-9_-]+/.exec(rotated.text)?.[0] ?? '';
  assert.equal((await mcpStatus(url, fresh)).status, 400, 'the rotated credential works');
});
