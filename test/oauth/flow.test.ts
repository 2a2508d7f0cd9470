// The whole OAuth flow as an MCP client runs it, with the MCP SDK's own OAuth client
// (auth.js, through StreamableHTTPClientTransport's authProvider): the 401 from /mcp →
// discovery → dynamic registration → authorize, where a signed-out person is sent to sign
// in, comes back to the consent page in Chromium, sees the endpoint's real queues and verbs
// and approves → the code exchanged with PKCE → `initialize` → a claim of a todo; then a
// refresh (rotated), then a revocation, after which the next call is 401.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { seriousViolations } from '../board/a11y.js';
import { launchBrowser, PASSWORD, screenshot } from '../board/harness.js';
import { testDatabase } from '../helpers/db.js';
import { MemoryProvider, mcpStatus, person, startOAuthServer } from './harness.js';

const db = await testDatabase('oauth_flow');
const server = await startOAuthServer(db);
const { url } = server;
const browser = await launchBrowser();
const alice = await person(db, server);
const mcpUrl = new URL('/mcp', url);
/** Never listened on: the browser's visit there is intercepted, as a native app's loopback listener would take it. */
const CALLBACK = 'http://127.0.0.1:9/callback';

function structured(result: unknown): Record<string, unknown> {
  const r = result as CallToolResult;
  assert.ok(!r.isError, JSON.stringify(r));
  return r.structuredContent as Record<string, unknown>;
}

test('the SDK client: DCR → consent in Chromium → token → initialize → claim, then refresh, then revoke', async () => {
  const provider = new MemoryProvider(CALLBACK);
  const first = new Client({ name: 'oauth-flow', version: '1.0.0' });
  await assert.rejects(
    first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })),
    UnauthorizedError,
  );
  assert.ok(provider.client?.client_id.startsWith('oc_'), 'registered dynamically');
  const authorizationUrl = provider.authorizationUrl;
  assert.ok(authorizationUrl, 'sent to the authorization endpoint');
  assert.equal(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
  assert.equal(authorizationUrl.searchParams.get('resource'), `${url}/mcp`);

  // The person, signed out, follows the link: sign-in first, then back to the consent page.
  const context = await browser.newContext({ baseURL: url });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  let callback: URL | null = null;
  await context.route(`${CALLBACK}**`, async (route) => {
    callback = new URL(route.request().url());
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'You may close this window.' });
  });
  await page.goto(authorizationUrl.href);
  await page.getByRole('heading', { name: 'Sign in', level: 1 }).waitFor();
  await page.getByLabel('Email').fill(alice.email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Authorize Test agent', level: 1 }).waitFor();
  const choice = page.getByRole('radio', { name: new RegExp(alice.endpoint.slug) });
  // The endpoint's real grant is shown: its queues and its verbs.
  const label = (await page.locator(`label:has(#ep-${alice.endpoint.slug})`).textContent()) ?? '';
  assert.match(label, /queues: inbox, ops/);
  assert.match(label, /claim_next/);
  assert.deepEqual(await seriousViolations(page), []);
  await screenshot(page, 'oauth-consent');
  await choice.check();
  await page.getByRole('button', { name: 'Approve' }).click();
  await page.waitForURL(`${CALLBACK}**`);
  assert.deepEqual(errors, [], 'no console error, no CSP refusal of the redirect');
  const back = callback as URL | null;
  assert.ok(back);
  const code = back.searchParams.get('code');
  assert.ok(code);
  assert.equal(back.searchParams.get('iss'), url);

  // The client exchanges the code and connects.
  const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await transport.finishAuth(code);
  const firstTokens = provider.saved;
  assert.ok(firstTokens);
  assert.ok(firstTokens.access_token.startsWith('sbo_'));
  assert.ok(firstTokens.refresh_token?.startsWith('sbr_'));
  const client = new Client({ name: 'oauth-flow', version: '1.0.0' });
  await client.connect(transport);
  const me = structured(await client.callTool({ name: 'whoami', arguments: {} }));
  assert.equal((me.endpoint as { slug: string }).slug, alice.endpoint.slug);
  const created = structured(
    await client.callTool({ name: 'create_todo', arguments: { queue: 'ops', title: 'through oauth' } }),
  );
  const claimed = structured(await client.callTool({ name: 'claim_next', arguments: {} }));
  const todo = claimed.todo as { id: string; state: string; owner_session_id: string };
  assert.equal(todo.id, (created.todo as { id: string }).id);
  assert.equal(todo.state, 'claimed');
  assert.equal(todo.owner_session_id, transport.sessionId);

  // The session is bound to the grant the token belongs to.
  const bound = await db.pool.query(`SELECT oauth_grant_id FROM mcp_sessions WHERE id = $1`, [transport.sessionId]);
  assert.match(String(bound.rows[0]?.oauth_grant_id), /^og_/);

  // Refresh through the SDK: a new pair, the old refresh token spent.
  assert.equal(await auth(provider, { serverUrl: mcpUrl }), 'AUTHORIZED');
  const secondTokens = provider.saved;
  assert.ok(secondTokens);
  assert.notEqual(secondTokens.access_token, firstTokens.access_token);
  assert.notEqual(secondTokens.refresh_token, firstTokens.refresh_token);
  structured(await client.callTool({ name: 'whoami', arguments: {} }));

  // The endpoint's page lists the client.
  await page.goto(`/endpoints/${alice.endpoint.slug}`);
  await page.getByRole('heading', { name: 'Authorized clients', level: 2 }).waitFor();
  assert.equal(await page.getByRole('cell', { name: 'Test agent', exact: true }).count(), 1);
  assert.deepEqual(await seriousViolations(page), []);

  // Revoked by the client (RFC 7009): the next call is 401, and the session is closed.
  const revoked = await fetch(`${url}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      token: secondTokens.refresh_token ?? '',
      token_type_hint: 'refresh_token',
      client_id: provider.client?.client_id ?? '',
    }).toString(),
  });
  assert.equal(revoked.status, 200);
  const next = await mcpStatus(url, secondTokens.access_token);
  assert.equal(next.status, 401);
  assert.match(next.challenge ?? '', /resource_metadata=/);
  await assert.rejects(client.callTool({ name: 'whoami', arguments: {} }));
  const closed = await db.pool.query(`SELECT closed_at FROM mcp_sessions WHERE id = $1`, [transport.sessionId]);
  assert.ok(closed.rows[0]?.closed_at);
  await context.close();
});
