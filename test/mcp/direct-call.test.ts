// Pins the direct tools/call path: it answers exactly what the SDK path answers (one
// JSON-RPC result, the session id echoed), checks the session in the same round trip as
// the bearer, and leaves every request of another shape to the SDK's own errors.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../helpers/db.js';
import { toolError } from '../helpers/tool-result.js';
import { connect, raw, startApp, vend } from './harness.js';

const { pool } = await testDatabase('mcp_direct');
const a = await startApp(pool, 'instance-a');
const b = await startApp(pool, 'instance-b');

const whoami = (id: number | string, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'whoami', arguments: {}, ...extra },
});

async function session() {
  const { endpoint, credential } = await vend(pool);
  const c = await connect(a.url, credential);
  const headers = { authorization: `Bearer ${credential}`, 'mcp-session-id': c.sessionId };
  return { endpoint, credential, c, headers };
}

test('a tools/call is answered as one JSON result carrying the request id and the session id', async () => {
  const { endpoint, c, headers } = await session();
  for (const [url, id] of [
    [a.url, 7],
    [b.url, 'req-8'],
  ] as const) {
    const res = await raw(url, 'POST', headers, whoami(id));
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    assert.equal(res.headers.get('mcp-session-id'), c.sessionId);
    const body = JSON.parse(res.text);
    assert.equal(body.jsonrpc, '2.0');
    assert.equal(body.id, id);
    assert.equal(body.result.structuredContent.endpoint.id, endpoint.id);
    assert.equal(JSON.parse(body.result.content[0].text).endpoint.id, endpoint.id);
  }
  await c.client.close();
});

test('a domain error on the direct path is an isError result naming the field', async () => {
  const { c, headers } = await session();
  const res = await raw(a.url, 'POST', headers, {
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/call',
    params: { name: 'claim', arguments: { id: 42 } },
  });
  const body = JSON.parse(res.text);
  const error = toolError(body.result);
  assert.equal(error.code, 'invalid_argument');
  assert.match(error.message, /\bid\b/);
  await c.client.close();
});

test("another endpoint's session, an unknown one and a deleted one answer 404", async () => {
  const mine = await session();
  const other = await session();
  const foreign = { ...mine.headers, 'mcp-session-id': other.c.sessionId };
  assert.equal((await raw(a.url, 'POST', foreign, whoami(1))).status, 404);
  assert.equal((await raw(a.url, 'POST', { ...mine.headers, 'mcp-session-id': 'ms_unknown' }, whoami(1))).status, 404);
  assert.equal((await raw(a.url, 'DELETE', mine.headers)).status, 200);
  const gone = await raw(b.url, 'POST', mine.headers, whoami(2));
  assert.equal(gone.status, 404);
  assert.equal(JSON.parse(gone.text).error.code, -32001);
  await other.c.client.close();
});

test('requests of any other shape keep the SDK transport answers', async () => {
  const { c, headers } = await session();
  const notAcceptable = await raw(a.url, 'POST', { ...headers, accept: 'application/json' }, whoami(1));
  assert.equal(notAcceptable.status, 406);
  const oldProtocol = await raw(a.url, 'POST', { ...headers, 'mcp-protocol-version': '1999-01-01' }, whoami(1));
  assert.equal(oldProtocol.status, 400);
  assert.match(oldProtocol.text, /Unsupported protocol version/);
  // Params the SDK's schema refuses are the one exception: answered -32602 here (the SDK
  // would say -32603, internal error), see the last tests of this file.
  const badArguments = await raw(a.url, 'POST', headers, whoami(3, { arguments: ['not', 'an', 'object'] }));
  assert.equal(JSON.parse(badArguments.text).error.code, -32602);
  const batch = await raw(a.url, 'POST', headers, [whoami(4), whoami(5)]);
  assert.equal(batch.status, 200);
  assert.match(batch.text, /"id":4/);
  assert.match(batch.text, /"id":5/);
  await c.client.close();
});

// The stamps ride on the read that authenticates a call, which an instance makes once per
// (credential, session) every 2 s (endpoints/credentials.ts): each call below is made to
// read, by dropping what the instance remembers of the credential first.
test('a call stamps last_seen_at of the endpoint and the session at most once a minute', async () => {
  const { endpoint, c, headers } = await session();
  const seen = async () =>
    (
      await pool.query<{ e: Date; s: Date }>(
        `SELECT e.last_seen_at AS e, s.last_seen_at AS s FROM endpoints e JOIN mcp_sessions s ON s.endpoint_id = e.id
          WHERE e.id = $1 AND s.id = $2`,
        [endpoint.id, c.sessionId],
      )
    ).rows[0];
  await pool.query(`UPDATE endpoints SET last_seen_at = now() - interval '5 minutes' WHERE id = $1`, [endpoint.id]);
  await pool.query(`UPDATE mcp_sessions SET last_seen_at = now() - interval '5 minutes' WHERE id = $1`, [c.sessionId]);
  const before = Date.now() - 60_000;
  a.services.credentials.forget(endpoint.id);
  assert.equal((await raw(a.url, 'POST', headers, whoami(1))).status, 200);
  const stamped = await seen();
  assert.ok(stamped && stamped.e.getTime() > before && stamped.s.getTime() > before);
  await pool.query(`UPDATE endpoints SET last_seen_at = now() - interval '30 seconds' WHERE id = $1`, [endpoint.id]);
  await pool.query(`UPDATE mcp_sessions SET last_seen_at = now() - interval '30 seconds' WHERE id = $1`, [c.sessionId]);
  const recent = await seen();
  a.services.credentials.forget(endpoint.id);
  assert.equal((await raw(a.url, 'POST', headers, whoami(2))).status, 200);
  assert.deepEqual(await seen(), recent);
  await c.client.close();
});

// Found by the fuzzer (test/fuzz/mcp.test.ts): params the SDK's schema refuses were
// answered -32603 (internal error) carrying the validator's text, and a NUL in an
// argument reached a query (PostgreSQL text cannot hold it) and answered `internal`.
test('a tools/call with arguments that are not an object, or an initialize with bad params, is -32602', async () => {
  const { c, headers } = await session();
  const requests = [
    ...[null, [{ id: 'td_x' }], 'text', 7, true].map((args, i) => ({
      jsonrpc: '2.0',
      id: i + 1,
      method: 'tools/call',
      params: { name: 'whoami', arguments: args },
    })),
    { jsonrpc: '2.0', id: 9, method: 'initialize', params: { name: 'whoami' } },
  ];
  for (const request of requests) {
    const res = await raw(a.url, 'POST', headers, request);
    assert.equal(res.status, 200, res.text);
    const body = JSON.parse(res.text);
    assert.equal(body.id, request.id);
    assert.equal(body.error?.code, -32602, res.text);
    assert.doesNotMatch(body.error.message, /invalid_type/);
  }
  // A batch holding one is not run at all: one -32602 for the batch.
  const batch = await raw(a.url, 'POST', headers, [requests[0], whoami(8)]);
  assert.deepEqual(
    [batch.status, JSON.parse(batch.text).id, JSON.parse(batch.text).error?.code],
    [200, null, -32602],
    batch.text,
  );
  await c.client.close();
});

test('a NUL or an unpaired surrogate anywhere in the arguments is invalid_argument naming the field, on every verb that reads strings', async () => {
  const { c, headers } = await session();
  const cases: [string, Record<string, unknown>, string][] = [
    ['ack_doorbell', { ring_id: '\u0000' }, 'ring_id'],
    ['get_doorbell_test', { test_id: 'dt_\u0000' }, 'test_id'],
    ['get_todo', { id: 'td_\u0000' }, 'id'],
    ['ack_message', { message_id: 'a\u0000b' }, 'message_id'],
    ['whoami', { '\u0000': 1 }, '\\u0000'],
    // Found by the fuzzer: jsonb refuses an unpaired surrogate's \ud800 escape, an internal
    // error on fail's result.
    ['fail', { id: 'td_x', result: { note: '\ud800' } }, 'result'],
    ['complete', { id: 'td_x', result: '\udc00x' }, 'result'],
  ];
  for (const [name, args, field] of cases) {
    const res = await raw(a.url, 'POST', headers, {
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const error = toolError(JSON.parse(res.text).result);
    assert.equal(error?.code, 'invalid_argument', `${name}: ${res.text}`);
    assert.equal(error.field, field, name);
  }
  await c.client.close();
});
