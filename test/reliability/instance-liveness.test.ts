// Instance liveness with a real kill -9: a `serve` child holding notification streams is
// killed. Its heartbeat stops, the surviving instance's dead-instance sweep closes the
// streams the dead one held and rings again what was forwarded there and lost: at once to
// another open stream of the endpoint, or on attach when the agent reconnects elsewhere,
// instead of at the 5-minute re-ring.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { vend } from '../mcp/harness.js';

const { pool, url } = await testDatabase('instance_liveness');
const BIN = fileURLToPath(new URL('../../bin/switchboard.js', import.meta.url));
// Short beats so the test does not wait 15 s; the threshold leaves the test a few hundred
// beats' worth of margin to forward its rings to the killed instance before it is judged.
const LIVENESS = { SWITCHBOARD_INSTANCE_HEARTBEAT: '250ms', SWITCHBOARD_INSTANCE_DEAD_AFTER: '2s' };

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  probe.close();
  await once(probe, 'close');
  assert.ok(address && typeof address === 'object');
  return address.port;
}

async function until(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (const deadline = Date.now() + 30_000; Date.now() < deadline;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** A `serve` child on the test database; killed at the end if still running. */
async function serve(instance: string): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_')));
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...env,
      ...LIVENESS,
      SWITCHBOARD_DATABASE_URL: url,
      SWITCHBOARD_LISTEN: `127.0.0.1:${port}`,
      SWITCHBOARD_INSTANCE_ID: instance,
      SWITCHBOARD_LOG_LEVEL: 'warn',
    },
    stdio: 'ignore',
  });
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const base = `http://127.0.0.1:${port}`;
  await until(
    async () =>
      (await fetch(`${base}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200,
    `${instance} ready`,
  );
  return { base, child };
}

/** An MCP client whose notification stream collects the todo ids it is rung for. */
async function agent(base: string, credential: string, heard: string[]): Promise<string> {
  const client = new Client(
    { name: 'liveness', version: '1' },
    { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  client.fallbackNotificationHandler = async (n) => {
    const todoId = (n.params as { meta?: { todo_id?: string } }).meta?.todo_id;
    if (n.method === 'notifications/claude/channel' && todoId) heard.push(todoId);
  };
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', base), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
    // No retries against a dead instance: the test reconnects elsewhere itself.
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 10,
      maxReconnectionDelay: 10,
      reconnectionDelayGrowFactor: 1,
    },
  });
  await client.connect(transport);
  after(() => client.close().catch(() => undefined));
  assert.ok(transport.sessionId);
  return transport.sessionId;
}

/** Opens the session's notification stream on `base` by hand (the agent reconnecting there). */
async function reopenStream(base: string, credential: string, sessionId: string, heard: string[]) {
  const response = await fetch(`${base}/mcp`, {
    headers: { authorization: `Bearer ${credential}`, 'mcp-session-id': sessionId, accept: 'text/event-stream' },
  });
  assert.equal(response.status, 200);
  const reader = response.body?.getReader();
  assert.ok(reader);
  after(() => reader.cancel().catch(() => undefined));
  void (async () => {
    const decoder = new TextDecoder();
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (chunk.done) return;
      for (const match of decoder.decode(chunk.value).matchAll(/"todo_id":"(td_[0-9A-Z]+)"/g))
        heard.push(match[1] ?? '');
    }
  })();
}

const session = async (id: string) =>
  (await pool.query('SELECT stream_open, instance FROM mcp_sessions WHERE id = $1', [id])).rows[0] as
    { stream_open: boolean; instance: string } | undefined;
const todoRow = async (id: string) =>
  (await pool.query('SELECT ring_attempts, last_ringed_at, last_rung_instance FROM todos WHERE id = $1', [id]))
    .rows[0] as { ring_attempts: number; last_ringed_at: Date | null; last_rung_instance: string | null };

test('after kill -9 of the instance holding streams, its streams count as closed and the lost rings are rung again at once', async () => {
  const a = await startTestServer(url, 'live-a', LIVENESS);
  const b = await serve('live-b');
  const beats = await pool.query<{ id: string }>('SELECT id FROM instances ORDER BY id');
  assert.deepEqual(
    beats.rows.map((r) => r.id),
    ['live-a', 'live-b'],
  );

  // Endpoint 1: one agent streaming on B, another on A. Endpoint 2: one agent, on B only.
  const one = await vend(pool);
  const two = await vend(pool);
  const heardOnB1: string[] = [];
  const heardOnA: string[] = [];
  const heardTwo: string[] = [];
  const s1 = await agent(b.base, one.credential, heardOnB1);
  const s2 = await agent(a.url, one.credential, heardOnA);
  const s3 = await agent(b.base, two.credential, heardTwo);
  await until(
    async () => (await session(s1))?.stream_open === true && (await session(s1))?.instance === 'live-b',
    's1 on B',
  );
  await until(
    async () => (await session(s2))?.stream_open === true && (await session(s2))?.instance === 'live-a',
    's2 on A',
  );
  await until(
    async () => (await session(s3))?.stream_open === true && (await session(s3))?.instance === 'live-b',
    's3 on B',
  );

  b.child.kill('SIGKILL');
  await once(b.child, 'exit');
  // Rotation would pick B's stream next (the one on A was rung just now); the rows still
  // say B holds s1 and s3, so both creation rings are forwarded to B and lost.
  await pool.query('UPDATE mcp_sessions SET last_rung_at = now() WHERE id = $1', [s2]);
  const create = async (endpointId: string, humanId: string, title: string) =>
    (await createTodo({ db: pool, defaultLeaseSeconds: 300 }, { endpointId }, { humanId }, { queue: 'inbox', title }))
      .todo.id;
  const t1 = await create(one.endpoint.id, one.humanId, 'rung to the dead instance, one other stream alive');
  const t2 = await create(two.endpoint.id, two.humanId, 'rung to the dead instance, no other stream');
  await until(async () => (await todoRow(t1)).last_rung_instance === 'live-b', 't1 forwarded to B');
  await until(async () => (await todoRow(t2)).last_rung_instance === 'live-b', 't2 forwarded to B');

  // A finds B dead: B's row is gone and its streams count as closed.
  await until(async () => (await pool.query("SELECT 1 FROM instances WHERE id = 'live-b'")).rowCount === 0, 'B reaped');
  assert.equal((await session(s1))?.stream_open, false);
  assert.equal((await session(s3))?.stream_open, false);
  assert.equal((await session(s2))?.stream_open, true, 'the live instance keeps its stream');
  assert.equal((await pool.query("SELECT 1 FROM instances WHERE id = 'live-a'")).rowCount, 1);

  // t1 is rung again at once on the stream that is still alive (A), not in 5 minutes.
  await until(() => heardOnA.includes(t1), 't1 rung again on A');
  const r1 = await todoRow(t1);
  assert.equal(r1.last_rung_instance, 'live-a');
  assert.equal(r1.ring_attempts, 1, 'the lost ring was given back: one ring spent, the one heard');
  assert.equal(heardOnB1.includes(t1), false);

  // t2 had nowhere to go: it waits, un-rung, and reaches the agent as soon as it reconnects on A.
  const r2 = await todoRow(t2);
  assert.equal(r2.last_ringed_at, null);
  assert.equal(r2.ring_attempts, 0);
  await reopenStream(a.url, two.credential, s3, heardTwo);
  await until(() => heardTwo.includes(t2), 't2 rung on attach on A');
  assert.equal((await session(s3))?.instance, 'live-a');
});

test('a clean shutdown deletes the instance row; a restart under the id of a killed process releases what it held', async () => {
  const c = await serve('live-c');
  const three = await vend(pool);
  const s = await agent(c.base, three.credential, []);
  await until(async () => (await session(s))?.stream_open === true, 'the stream on C');
  c.child.kill('SIGKILL');
  await once(c.child, 'exit');
  // The same instance id starts again (a supervisor restarting it) before anyone judged C
  // dead: its first beat finds the old row and releases the stream the killed process held.
  const again = await startTestServer(url, 'live-c', LIVENESS);
  assert.equal((await session(s))?.stream_open, false);
  await again.stop();
  assert.equal((await pool.query("SELECT 1 FROM instances WHERE id = 'live-c'")).rowCount, 0);
});
