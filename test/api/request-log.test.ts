// Pins the request log: one JSON line per request with a request id (the caller's, when
// it is a short token, echoed back), the route pattern instead of the raw URL (a webhook
// URL's path is its secret), and the endpoint slug on /mcp; probes stay quiet.

import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { pino } from 'pino';
import { testDatabase } from '../helpers/db.js';
import { connect, ok, startApp, vend } from '../mcp/harness.js';

const { pool } = await testDatabase('request_log');
const lines: Array<Record<string, unknown>> = [];
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
    done();
  },
});
const app = await startApp(pool, 'instance-a', undefined, { log: pino({ level: 'info' }, sink) });
const requests = () => lines.filter((l) => l.msg === 'request');

test('each request logs one line with its id, route and status, and echoes the id', async () => {
  const res = await fetch(`${app.url}/api/v1/whoami`, { headers: { 'x-request-id': 'trace-42' } });
  assert.equal(res.status, 401);
  assert.equal(res.headers.get('x-request-id'), 'trace-42');
  const line = requests().find((l) => l.request_id === 'trace-42');
  assert.ok(line, JSON.stringify(lines));
  assert.equal(line.method, 'GET');
  assert.equal(line.route, '/api/v1/whoami');
  assert.equal(line.status, 401);
  assert.equal(typeof line.ms, 'number');
});

test('a request id that is not a short token is replaced by a fresh one', async () => {
  const res = await fetch(`${app.url}/api/v1/whoami`, { headers: { 'x-request-id': 'bad id\twith "quotes"' } });
  const id = res.headers.get('x-request-id') ?? '';
  assert.match(id, /^[0-9a-f]{16}$/);
  assert.ok(requests().some((l) => l.request_id === id));
});

test('a webhook delivery logs the route pattern, never the token in its URL', async () => {
  const secret = 'whtok_' + 'z'.repeat(40);
  await fetch(`${app.url}/webhooks/${secret}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  assert.ok(requests().some((l) => l.route === '/webhooks/:token'));
  assert.ok(!JSON.stringify(lines).includes(secret));
});

test('an MCP request names its endpoint; probes write no line', async () => {
  const { endpoint, credential } = await vend(pool);
  const agent = await connect(app.url, credential);
  await ok(agent, 'whoami');
  const mcp = requests().filter((l) => l.route === '/mcp' && l.endpoint === endpoint.slug);
  assert.ok(mcp.length >= 2, JSON.stringify(requests()));
  assert.ok(!JSON.stringify(lines).includes(credential));
  const before = requests().length;
  await (await fetch(`${app.url}/healthz`)).text();
  assert.equal(requests().length, before);
});
