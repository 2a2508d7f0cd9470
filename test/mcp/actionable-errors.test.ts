// Pins the /mcp refusals an agent can act on: a request without Mcp-Session-Id that is
// not initialize is told to initialize first, and a body over the 1 MiB limit is a
// JSON-RPC error (413, id null), like every other refusal on /mcp, not the API's body.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../helpers/db.js';
import { connect, fails, ok, raw, startApp, vend } from './harness.js';

const { pool } = await testDatabase('mcp_actionable_errors');
const app = await startApp(pool, 'instance-a');

test('a POST without Mcp-Session-Id that is not initialize says to initialize first', async () => {
  const { credential } = await vend(pool);
  const res = await raw(
    app.url,
    'POST',
    { authorization: `Bearer ${credential}` },
    {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/list',
    },
  );
  assert.equal(res.status, 400);
  const body = JSON.parse(res.text);
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(body.id, null);
  assert.equal(body.error.code, -32000);
  assert.match(body.error.message, /Mcp-Session-Id header is required/);
  assert.match(body.error.message, /send `initialize` first/);
});

test('a body over 1 MiB on /mcp is a JSON-RPC error with 413, before and after initialize', async () => {
  const { credential } = await vend(pool);
  const c = await connect(app.url, credential);
  const big = {
    jsonrpc: '2.0',
    id: 7,
    method: 'tools/call',
    params: { name: 'create_todo', arguments: { queue: 'inbox', title: 'big', body: 'x'.repeat(1024 * 1024) } },
  };
  const sessions: Array<Record<string, string>> = [
    { authorization: `Bearer ${credential}`, 'mcp-session-id': c.sessionId },
    { authorization: `Bearer ${credential}` },
  ];
  for (const headers of sessions) {
    const res = await raw(app.url, 'POST', headers, big);
    assert.equal(res.status, 413);
    const body = JSON.parse(res.text);
    assert.deepEqual(Object.keys(body).sort(), ['error', 'id', 'jsonrpc']);
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, null);
    assert.equal(body.error.code, -32600);
    assert.match(body.error.message, /larger than the 1 MiB limit/);
  }
  // The session is unharmed, and the API keeps its own error body for the same refusal.
  await ok(c, 'whoami');
  await fails(c, 'get_todo', { id: 'td_01JAAAAAAAAAAAAAAAAAAAAAAA' }, 'not_found');
  const api = await fetch(new URL('/api/v1/todos', app.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ title: 'x'.repeat(1024 * 1024) }),
  });
  assert.equal(api.status, 413);
  assert.equal(((await api.json()) as { error: { code: string } }).error.code, 'invalid_argument');
});
