// Pins POST /api/v1/endpoints/{ref}/rotate (docs/design/mcp-surface.md, "Rotating a
// credential"): a new credential shown once with the slug, .mcp.json and channel flag
// unchanged; the old one keeps working through its grace (the server's setting, or
// grace_seconds) and stops when it ends — also for a session whose answer this process
// had cached; a revoke ends both; another human's endpoint is not_found.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiHarness, expectError, expectStatus, makePeople, vend } from './app.js';

const h = await apiHarness('api_rotate');
const { member, other } = await makePeople(h);

/** Whether /mcp takes this bearer: an initialize answers 200, a refused bearer 401. */
async function mcpTakes(credential: string): Promise<boolean> {
  const res = await h.request('POST', '/mcp', {
    token: credential,
    headers: { accept: 'application/json, text/event-stream' },
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'rotate-test', version: '1' } },
    },
  });
  assert.ok(res.status === 200 || res.status === 401, `${res.status} ${res.text}`);
  return res.status === 200;
}

test('a rotation keeps the slug and .mcp.json; the old credential works through the grace, then stops', async () => {
  const vended = await vend(h, member);
  const before = await h.get(`/api/v1/endpoints/${vended.endpoint.slug}`, { token: member.token });
  const rotated = await h.post(`/api/v1/endpoints/${vended.endpoint.slug}/rotate`, { token: member.token, body: {} });
  expectStatus(rotated, 200, 'rotate');
  assert.match(rotated.body.credential, /^sbk_/);
  assert.notEqual(rotated.body.credential, vended.credential);
  assert.equal(rotated.body.endpoint.slug, vended.endpoint.slug);
  assert.deepEqual(rotated.body.guidance, before.body.guidance, 'flags, allowed tools and .mcp.json names unchanged');
  // The server's default grace: an hour from now.
  const until = Date.parse(rotated.body.previous_valid_until as string);
  assert.ok(Math.abs(until - Date.now() - 3_600_000) < 60_000, rotated.body.previous_valid_until);

  assert.equal(await mcpTakes(rotated.body.credential), true, 'the new credential');
  assert.equal(await mcpTakes(vended.credential), true, 'the old one, within its grace');
  const { credentials } = h.services;
  const old = await credentials.find(vended.credential, null);
  assert.equal(old?.endpoint.slug, vended.endpoint.slug);

  // The grace ends (as if an hour passed): the old credential is refused; the new one is not.
  await h.pool.query(
    `UPDATE endpoints SET previous_credential_expires_at = now() - interval '1 second' WHERE id = $1`,
    [vended.endpoint.id],
  );
  assert.equal(await mcpTakes(vended.credential), false);
  assert.equal(await mcpTakes(rotated.body.credential), true);
});

test('grace_seconds 0 ends the old credential at once, cached session answers included', async () => {
  const vended = await vend(h, member);
  const sessionId = 'ms_ROTATECACHED000000000000';
  await h.pool.query(
    `INSERT INTO mcp_sessions (endpoint_id, id, client_name, client_version, instance) VALUES ($1, $2, 'c', '1', 'i')`,
    [vended.endpoint.id, sessionId],
  );
  const { credentials } = h.services;
  // A live session's answer is remembered for a while: the rotation must drop it.
  assert.equal((await credentials.find(vended.credential, sessionId))?.sessionLive, true);
  const rotated = await h.post(`/api/v1/endpoints/${vended.endpoint.id}/rotate`, {
    token: member.token,
    body: { grace_seconds: 0 },
  });
  expectStatus(rotated, 200, 'rotate');
  assert.equal(rotated.body.previous_valid_until, null);
  assert.equal(await credentials.find(vended.credential, sessionId), null);
  assert.equal(await mcpTakes(vended.credential), false);
  assert.equal((await credentials.find(rotated.body.credential, sessionId))?.sessionLive, true);

  // A second rotation replaces the credential again; only the one before it is in grace.
  const again = await h.post(`/api/v1/endpoints/${vended.endpoint.slug}/rotate`, {
    token: member.token,
    body: { grace_seconds: 60 },
  });
  expectStatus(again, 200, 'rotate again');
  assert.equal(await mcpTakes(rotated.body.credential), true);
  assert.equal(await mcpTakes(again.body.credential), true);
  assert.equal(await mcpTakes(vended.credential), false);
});

test('a revoke ends a credential in grace too; a revoked endpoint cannot rotate; bad input names its field', async () => {
  const vended = await vend(h, member);
  const rotated = await h.post(`/api/v1/endpoints/${vended.endpoint.slug}/rotate`, { token: member.token });
  expectStatus(rotated, 200, 'rotate');
  for (const [body, label] of [
    [{ grace_seconds: -1 }, 'negative'],
    [{ grace_seconds: 7 * 86_400 + 1 }, 'over 7 days'],
    [{ grace_seconds: 'soon' }, 'not a number'],
    [{ grace: 60 }, 'unknown field'],
  ] as const) {
    const res = await h.post(`/api/v1/endpoints/${vended.endpoint.slug}/rotate`, { token: member.token, body });
    expectError(res, 400, 'invalid_argument', undefined, label);
  }
  expectStatus(await h.post(`/api/v1/endpoints/${vended.endpoint.slug}/revoke`, { token: member.token }), 200);
  assert.equal(await mcpTakes(vended.credential), false);
  assert.equal(await mcpTakes(rotated.body.credential), false);
  const refused = await h.post(`/api/v1/endpoints/${vended.endpoint.slug}/rotate`, { token: member.token });
  expectError(refused, 409, 'conflict');

  const mine = await vend(h, member);
  const foreign = await h.post(`/api/v1/endpoints/${mine.endpoint.slug}/rotate`, { token: other.token });
  expectError(foreign, 404, 'not_found');
  assert.equal(await mcpTakes(mine.credential), true, 'a foreign attempt changed nothing');
});
