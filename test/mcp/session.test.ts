// Pins the /mcp session surface: what initialize advertises, tools/list by grant, bearer
// authentication (401), the mcp_sessions registry, a session served by another instance,
// foreign and unknown session ids (404), and DELETE.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { revokeEndpoint } from '../../src/endpoints/manage.js';
import { versionInfo } from '../../src/version.js';
import { testDatabase } from '../helpers/db.js';
import { call, connect, type Body, fails, ok, raw, resume, startApp, vend } from './harness.js';
import { until } from '../helpers/wait.js';

const { pool } = await testDatabase('mcp_session');
const a = await startApp(pool, 'instance-a');
// Each app keeps its own credential answers (endpoints/credentials.ts), and these two
// share no bus: B reuses none, so what it serves is what the database says at once.
const b = await startApp(pool, 'instance-b', undefined, { env: { SWITCHBOARD_MCP_CREDENTIAL_REUSE: '0s' } });

async function sessionRow(id: string): Promise<Body> {
  const res = await pool.query('SELECT * FROM mcp_sessions WHERE id = $1', [id]);
  return res.rows[0];
}

const initializeBody = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};

test('initialize advertises tools, the claude/channel capability, serverInfo and the contract', async () => {
  const { credential } = await vend(pool, { default_lease_seconds: 120 });
  const c = await connect(a.url, credential);
  const capabilities = c.client.getServerCapabilities();
  assert.ok(capabilities?.tools);
  assert.deepEqual(capabilities?.experimental, { 'claude/channel': {} });
  assert.deepEqual(c.client.getServerVersion(), { name: 'switchboard', version: versionInfo().version });
  const instructions = c.client.getInstructions() ?? '';
  assert.match(
    instructions.split('\n')[0] ?? '',
    new RegExp(`^Switchboard ${versionInfo().version.replace(/\./g, '\\.')}`),
  );
  assert.match(instructions, /claim_next/);
  assert.match(instructions, /complete/);
  assert.match(instructions, /heartbeat/);
  assert.match(instructions, /120 s/);
  assert.match(instructions, /`conflict`.*lost the todo/);
  assert.match(instructions, /complete, fail .*or release/);
  assert.match(instructions, /Errors are tool results with isError whose text is the JSON \{"error"/);
  assert.match(instructions, /no structuredContent/);
});

test('the session is recorded with its client, instance and open stream', async () => {
  const { endpoint, credential } = await vend(pool);
  const c = await connect(a.url, credential, 'recorder');
  const row = await sessionRow(c.sessionId);
  assert.equal(row.endpoint_id, endpoint.id);
  assert.equal(row.client_name, 'recorder');
  assert.equal(row.client_version, '1.2.3');
  assert.equal(row.instance, 'instance-a');
  assert.equal(row.closed_at, null);
  assert.match(c.sessionId, /^ms_[0-9A-Z]{26}$/);
  // The SDK client opens its notification stream (GET) right after initialize.
  await until(async () => (await sessionRow(c.sessionId)).stream_open === true, 'stream_open');
  await c.client.close();
  await until(async () => (await sessionRow(c.sessionId)).stream_open === false, 'the stream to be marked closed');
});

test('a session records whether its initialize declared the claude/channel capability', async () => {
  const { credential } = await vend(pool);
  const plain = await connect(a.url, credential, 'plain', { channel: false });
  assert.equal((await sessionRow(plain.sessionId)).channel, false);
  const harnessed = await connect(a.url, credential);
  assert.equal((await sessionRow(harnessed.sessionId)).channel, true);
  const declared = {
    ...initializeBody,
    params: { ...initializeBody.params, capabilities: { experimental: { 'claude/channel': {} } } },
  };
  const res = await raw(a.url, 'POST', { authorization: `Bearer ${credential}` }, declared);
  assert.equal(res.status, 200, res.text);
  const id = res.headers.get('mcp-session-id');
  assert.ok(id);
  assert.equal((await sessionRow(id)).channel, true);
});

test('tools/list shows the granted verbs plus the self verbs, and nothing else', async () => {
  const only = await connect(a.url, (await vend(pool, { verbs: ['create'] })).credential);
  const names = (await only.client.listTools()).tools.map((t) => t.name).sort();
  assert.deepEqual(names, [
    'ack_doorbell',
    'ack_message',
    'clock_in',
    'clock_out',
    'create_todo',
    'get_doorbell_test',
    'next_message',
    'presence',
    'test_doorbell',
    'whoami',
  ]);

  const basic = await connect(a.url, (await vend(pool)).credential);
  const tools = (await basic.client.listTools()).tools;
  assert.deepEqual(tools.map((t) => t.name).sort(), [
    'ack_doorbell',
    'ack_message',
    'admission_status',
    'ask_human',
    'claim',
    'claim_next',
    'clock_in',
    'clock_out',
    'complete',
    'create_todo',
    'fail',
    'get_doorbell_test',
    'get_todo',
    'heartbeat',
    'list_sessions',
    'list_todos',
    'next_message',
    'presence',
    'release',
    'send_message',
    'test_doorbell',
    'whoami',
  ]);
  for (const tool of tools) {
    assert.ok(tool.description && tool.description.length > 20, tool.name);
    assert.equal(tool.inputSchema.type, 'object', tool.name);
  }
  const claim = tools.find((t) => t.name === 'claim');
  assert.deepEqual(claim?.inputSchema.required, ['id']);
  assert.match(JSON.stringify(claim?.inputSchema.properties), /Lease length in seconds/);
});

test('an ungranted verb is forbidden and changes nothing', async () => {
  const c = await connect(a.url, (await vend(pool, { verbs: ['drain'] })).credential);
  const before = await pool.query('SELECT count(*)::int AS n FROM todos');
  await fails(c, 'create_todo', { queue: 'inbox', title: 'sneaky' }, 'forbidden');
  await fails(c, 'list_sessions', {}, 'forbidden');
  const after = await pool.query('SELECT count(*)::int AS n FROM todos');
  assert.deepEqual(after.rows, before.rows);
  await fails(c, 'no_such_tool', {}, 'not_found');
});

test('whoami answers the endpoint and this session', async () => {
  const { endpoint, credential } = await vend(pool, { queues: ['inbox', 'builds'], verbs: ['drain'] });
  const c = await connect(a.url, credential);
  const body = await ok(c, 'whoami');
  assert.deepEqual(body, {
    endpoint: { id: endpoint.id, slug: endpoint.slug, queues: ['inbox', 'builds'], verbs: endpoint.verbs },
    session_id: c.sessionId,
  });
  await fails(c, 'whoami', { extra: 1 }, 'invalid_argument', 'extra');
});

test('a missing, malformed, unknown or revoked credential answers 401 with WWW-Authenticate', async () => {
  const vended = await vend(pool);
  const live = await connect(a.url, vended.credential);
  const cases: Array<[string, Record<string, string>]> = [
    ['missing', {}],
    ['not bearer', { authorization: `Basic ${vended.credential}` }],
    ['malformed', { authorization: 'Bearer sbk_short' }],
    ['unknown', { authorization: `Bearer sbk_${'x'.repeat(43)}` }],
    ['an API token shape', { authorization: `Bearer sbt_${'x'.repeat(43)}` }],
  ];
  for (const [label, headers] of cases) {
    for (const method of ['POST', 'GET', 'DELETE']) {
      const res = await raw(a.url, method, headers, method === 'POST' ? initializeBody : undefined);
      assert.equal(res.status, 401, `${label} ${method}`);
      assert.equal(
        res.headers.get('www-authenticate'),
        'Bearer realm="switchboard", resource_metadata="http://switchboard.test/.well-known/oauth-protected-resource/mcp"',
        label,
      );
    }
  }
  // Revoked through instance A's process: its credential answers go at once.
  await revokeEndpoint(
    { db: pool, publicUrl: 'http://switchboard.test', credentials: a.services.credentials },
    vended.humanId,
    vended.endpoint.id,
    new Date(),
  );
  const res = await raw(
    a.url,
    'POST',
    { authorization: `Bearer ${vended.credential}`, 'mcp-session-id': live.sessionId },
    {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/list',
    },
  );
  assert.equal(res.status, 401);
  assert.equal(
    res.headers.get('www-authenticate'),
    'Bearer realm="switchboard", resource_metadata="http://switchboard.test/.well-known/oauth-protected-resource/mcp"',
  );
  await assert.rejects(connect(a.url, vended.credential));
});

test('a session minted on one instance is served by another', async () => {
  const { credential } = await vend(pool);
  const onA = await connect(a.url, credential);
  const onB = await resume(b.url, credential, onA.sessionId);
  const who = await ok(onB, 'whoami');
  assert.equal(who.session_id, onA.sessionId);
  const created = await ok(onB, 'create_todo', { queue: 'inbox', title: 'across instances' });
  const claimed = await ok(onB, 'claim', { id: created.todo.id });
  assert.equal(claimed.todo.owner_session_id, onA.sessionId);
  // The same session, back on the instance that minted it, owns the claim.
  await ok(onA, 'complete', { id: created.todo.id });
  const sessions = await ok(onB, 'list_sessions');
  assert.deepEqual(
    (sessions.sessions as Array<{ id: string; current: boolean }>).map((s) => [s.id, s.current]),
    [[onA.sessionId, true]],
  );
});

test('a session id of another endpoint, or an unknown one, answers 404', async () => {
  const mine = await connect(a.url, (await vend(pool)).credential);
  const other = await vend(pool);
  const list = { jsonrpc: '2.0', id: 3, method: 'tools/list' };
  for (const [label, url, sessionId] of [
    ['foreign, same instance', a.url, mine.sessionId],
    ['foreign, other instance', b.url, mine.sessionId],
    ['unknown', a.url, 'ms_01JAAAAAAAAAAAAAAAAAAAAAAA'],
  ] as const) {
    const headers = { authorization: `Bearer ${other.credential}`, 'mcp-session-id': sessionId };
    for (const method of ['POST', 'GET', 'DELETE']) {
      const res = await raw(url, method, headers, method === 'POST' ? list : undefined);
      assert.equal(res.status, 404, `${label} ${method}: ${res.text}`);
    }
  }
  // The owner's session is untouched.
  await ok(mine, 'whoami');
  assert.equal((await sessionRow(mine.sessionId)).closed_at, null);
});

test('a request without a session id that is not initialize answers 400', async () => {
  const { credential } = await vend(pool);
  const res = await raw(
    a.url,
    'POST',
    { authorization: `Bearer ${credential}` },
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
  );
  assert.equal(res.status, 400);
  assert.match(res.text, /Mcp-Session-Id/);
});

test('DELETE closes the session everywhere', async () => {
  const { credential } = await vend(pool);
  const c = await connect(a.url, credential);
  const onB = await resume(b.url, credential, c.sessionId);
  await ok(onB, 'whoami');
  await c.transport.terminateSession();
  const row = await sessionRow(c.sessionId);
  assert.notEqual(row.closed_at, null);
  assert.equal(row.stream_open, false);
  const headers = { authorization: `Bearer ${credential}`, 'mcp-session-id': c.sessionId };
  for (const url of [a.url, b.url]) {
    const res = await raw(url, 'POST', headers, { jsonrpc: '2.0', id: 9, method: 'tools/list' });
    assert.equal(res.status, 404, url);
  }
  assert.equal((await raw(a.url, 'DELETE', headers)).status, 404);
  assert.equal((await call(await connect(a.url, credential), 'whoami')).isError, undefined);
});

test('shutdown ends the open streams and records them as closed', async () => {
  const { credential } = await vend(pool);
  const c = await startApp(pool, 'instance-c');
  const session = await connect(c.url, credential);
  await until(async () => (await sessionRow(session.sessionId)).stream_open === true, 'stream_open');
  await c.app.close();
  const row = await sessionRow(session.sessionId);
  assert.equal(row.stream_open, false);
  assert.equal(row.closed_at, null, 'the session itself lives on: another instance can serve it');
  await ok(await resume(a.url, credential, session.sessionId), 'whoami');
});
