// Pins presence end to end on two real servers: an out endpoint hears no doorbell and
// keeps its ring budget; a change to in sends one digest ring, decided once across
// instances; the presence self verbs answer and validate.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Server } from '../../src/main.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { vend } from '../mcp/harness.js';
import { until } from '../helpers/wait.js';

const { pool, url } = await testDatabase('presence_digest');

const server = (name: string): Promise<Server> => startTestServer(url, name);

const a = await server('presence-a');
const b = await server('presence-b');

interface Channel {
  content: string;
  meta: Record<string, string>;
}

const settle = (ms = 400) => new Promise((r) => setTimeout(r, ms));

async function listener(base: string, credential: string) {
  const heard: Channel[] = [];
  const client = new Client(
    { name: 'claude-code', version: '2.0.0' },
    { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  client.fallbackNotificationHandler = async (n) => {
    if (n.method === 'notifications/claude/channel') heard.push(n.params as unknown as Channel);
  };
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
  });
  await client.connect(transport);
  after(() => client.close());
  const sessionId = transport.sessionId ?? '';
  await until(async () => {
    const res = await pool.query('SELECT stream_open FROM mcp_sessions WHERE id = $1', [sessionId]);
    return res.rows[0]?.stream_open === true;
  }, 'the stream to open');
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      structuredContent?: Record<string, unknown>;
      content: Array<{ text: string }>;
    };
    return { isError: result.isError === true, body: JSON.parse(result.content[0]?.text ?? '{}') };
  };
  return { heard, call, sessionId };
}

function push(endpointId: string, humanId: string, title: string) {
  return createTodo({ db: pool, defaultLeaseSeconds: 300 }, { endpointId }, { humanId }, { queue: 'inbox', title });
}

async function todoRow(id: string) {
  const res = await pool.query('SELECT ring_attempts, last_ringed_at FROM todos WHERE id = $1', [id]);
  return res.rows[0] as { ring_attempts: number; last_ringed_at: Date | null };
}

test('an out endpoint gets no doorbells and no re-rings and keeps its ring budget; clock_in sends one digest', async () => {
  const { endpoint, humanId, credential } = await vend(pool);
  // A session attaching is rung for waiting work; a probe todo is that work, so hearing it
  // means the attach pass is over and cannot ring `first` a second time (seen under load).
  // The probe is then done, so the digest below counts only this test's todos.
  const probe = await push(endpoint.id, humanId, 'probe');
  const l = await listener(a.url, credential);
  await until(() => l.heard.some((h) => h.meta.todo_id === probe.todo.id), 'the attach ring of the probe');
  assert.equal((await l.call('claim', { id: probe.todo.id })).isError, false);
  assert.equal((await l.call('complete', { id: probe.todo.id })).isError, false);
  l.heard.length = 0;
  const first = await push(endpoint.id, humanId, 'rung while in');
  await until(() => l.heard.length === 1, 'the ring while in');
  const out = await l.call('clock_out');
  assert.equal(out.body.presence, 'out');
  assert.equal(out.body.source, 'agent');

  const second = await push(endpoint.id, humanId, 'created while out');
  await pool.query(
    `UPDATE todos SET created_at = now() - interval '10 minutes', last_ringed_at = now() - interval '10 minutes'
      WHERE id = $1`,
    [first.todo.id],
  );
  await a.doorbell.rering();
  await b.doorbell.rering();
  await settle();
  assert.equal(l.heard.length, 1, 'no doorbell and no re-ring while out');
  assert.equal((await todoRow(first.todo.id)).ring_attempts, 1, 'the re-ring spent nothing');
  assert.equal((await todoRow(second.todo.id)).ring_attempts, 0, 'the creation ring spent nothing');

  const back = await l.call('clock_in', { for: '2h' });
  assert.equal(back.body.presence, 'in');
  // Only digests count from here: now that the endpoint is in, the minute's re-ring sweep
  // may ring `first` (made 10 minutes old above) again, as it should.
  const digests = () => l.heard.filter((h) => h.meta.kind === 'digest');
  await until(() => digests().length === 1, 'the digest');
  await settle();
  assert.equal(digests().length, 1, 'exactly one digest');
  const digest = digests()[0]!;
  assert.equal(digest.meta.kind, 'digest');
  assert.equal(digest.meta.pending, '2');
  assert.equal(digest.meta.queues, 'inbox');
  assert.equal(digest.meta.reason, 'clock_in');
  assert.ok(Object.values(digest.meta).every((v) => typeof v === 'string'));
  assert.equal(digest.meta.todo_id, undefined);
  assert.equal((await todoRow(second.todo.id)).ring_attempts, 0, 'the digest spends no ring budget');
});

test('a change to in is decided once across two instances: one digest for two evaluating sweeps', async () => {
  const { endpoint, humanId, credential } = await vend(pool);
  const la = await listener(a.url, credential);
  const lb = await listener(b.url, credential);
  await la.call('clock_out');
  for (const t of ['one', 'two', 'three']) await push(endpoint.id, humanId, t);
  await settle();
  assert.equal(la.heard.length + lb.heard.length, 0);
  await pool.query(`UPDATE endpoints SET override_until = now() - interval '1 second' WHERE id = $1`, [endpoint.id]);
  const before = a.push.presence.digests + b.push.presence.digests;
  const results = await Promise.all([a.push.presence.evaluate(), b.push.presence.evaluate()]);
  // At most one: the background presence sweep may have won the change a moment earlier.
  assert.ok(results.reduce((n, r) => n + r.changed, 0) <= 1, 'never both instances recorded the change');
  await until(() => la.heard.length + lb.heard.length >= 1, 'the digest');
  await settle();
  const heard = [...la.heard, ...lb.heard];
  assert.equal(heard.length, 1, 'one digest ring in all');
  assert.equal(heard[0]!.meta.kind, 'digest');
  assert.equal(heard[0]!.meta.pending, '3');
  assert.equal(heard[0]!.meta.reason, 'override_end');
  assert.equal(a.push.presence.digests + b.push.presence.digests - before, 1);
});

test('a change to in without pending work sends no digest', async () => {
  const { credential } = await vend(pool);
  const l = await listener(b.url, credential);
  await l.call('clock_out');
  await l.call('clock_in');
  await settle();
  assert.equal(l.heard.length, 0);
});

test('presence answers presence, source, until, shift and pending; bad arguments name their field', async () => {
  const { endpoint, humanId, credential } = await vend(pool);
  const l = await listener(a.url, credential);
  await push(endpoint.id, humanId, 'waiting');
  const now = await l.call('presence');
  assert.deepEqual(now.body, { presence: 'in', source: 'default', until: null, shift: null, pending: 1 });
  const tooLong = await l.call('clock_in', { for: '9h' });
  assert.equal(tooLong.isError, true);
  assert.equal(tooLong.body.error.code, 'invalid_argument');
  assert.match(tooLong.body.error.message, /^for:/);
  const extra = await l.call('clock_out', { until: 'later' });
  assert.equal(extra.isError, true);
});
