// Pins at-least-once delivery across a crash: a `serve` process killed (SIGKILL) between
// writing a message to the agent's stream and the agent's ack. The session survives in
// PostgreSQL; when the restarted server has the session's stream again, the message is
// delivered once more, and after its ack it is gone. While in flight it never shows as
// pending.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { addMessage, queueStatus } from '../../src/messages/queue.js';
import { testDatabase } from '../helpers/db.js';
import { vend } from '../mcp/harness.js';
import { depsOf } from './world.js';

const { pool, url } = await testDatabase('messages_restart');
const BIN = fileURLToPath(new URL('../../bin/switchboard.js', import.meta.url));

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  probe.close();
  assert.ok(address && typeof address === 'object');
  return address.port;
}

/** A `serve` child on the test database at this port; killed at the end if still running. */
async function serve(port: number, instance: string): Promise<ChildProcess> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_')));
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...env,
      SWITCHBOARD_DATABASE_URL: url,
      SWITCHBOARD_LISTEN: `127.0.0.1:${port}`,
      SWITCHBOARD_INSTANCE_ID: instance,
      SWITCHBOARD_LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  for (const stream of [child.stdout, child.stderr])
    stream?.setEncoding('utf8').on('data', (c: string) => (output += c));
  after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  await until(
    () =>
      fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.status === 200,
        () => false,
      ),
    () => `serve ${instance} ready; its output: ${output.slice(-2000)}`,
    60_000,
  );
  return child;
}

async function until(
  check: () => Promise<boolean> | boolean,
  what: string | (() => string),
  ms = 15_000,
): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  assert.fail(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
}

test('a server killed between reserve and ack redelivers the message once after restart; its ack removes it', async () => {
  const port = await freePort();
  const first = await serve(port, 'restart-1');
  const { humanId, credential } = await vend(pool);
  const heard: string[] = [];
  const client = new Client(
    { name: 'survivor', version: '1' },
    { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  client.fallbackNotificationHandler = async (n) => {
    const id = (n.params as { meta?: { message_id?: string } }).meta?.message_id;
    if (n.method === 'notifications/claude/channel' && id) heard.push(id);
  };
  const transport = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${credential}` } },
    // Keep reopening the stream while the server is down, as a long-running agent would.
    reconnectionOptions: {
      maxRetries: 400,
      initialReconnectionDelay: 100,
      maxReconnectionDelay: 250,
      reconnectionDelayGrowFactor: 1.2,
    },
  });
  await client.connect(transport);
  after(() => client.close());
  const sessionId = transport.sessionId ?? '';
  const streamOn = (instance: string) => async () =>
    (await pool.query('SELECT stream_open, instance FROM mcp_sessions WHERE id = $1', [sessionId])).rows[0]
      ?.instance === instance;
  await until(streamOn('restart-1'), 'the stream on the first server');

  const deps = depsOf(pool);
  const human = { kind: 'user' as const, humanId };
  const { entry } = await addMessage(deps, human, sessionId, { content: 'do not lose me' });
  await until(() => heard.length === 1, 'the first delivery');
  assert.equal(heard[0], entry.id);
  // Status read between two reads of the row that find the same reservation never lists it.
  const reservation = async () =>
    (await pool.query('SELECT reserved_in_flight, delivery_attempts FROM queued_messages WHERE id = $1', [entry.id]))
      .rows[0] as { reserved_in_flight: boolean; delivery_attempts: number };
  let checked = 0;
  for (const deadline = Date.now() + 300; Date.now() < deadline;) {
    const before = await reservation();
    const status = await queueStatus(deps, human, sessionId);
    const after = await reservation();
    const same =
      before.reserved_in_flight && after.reserved_in_flight && before.delivery_attempts === after.delivery_attempts;
    if (!same) continue;
    assert.deepEqual(status.entries, [], 'in flight: not shown as pending');
    checked += 1;
  }
  assert.ok(checked > 0, 'the message stayed in flight');

  first.kill('SIGKILL');
  await once(first, 'exit');
  await serve(port, 'restart-2');
  await until(() => heard.length === 2, 'the redelivery after the restart', 30_000);
  assert.equal(heard[1], entry.id);
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(heard.length, 2, 'redelivered once');

  const ack = (await client.callTool({ name: 'ack_message', arguments: { message_id: entry.id } })) as {
    isError?: boolean;
  };
  assert.ok(!ack.isError);
  const left = await pool.query('SELECT count(*)::int AS n FROM queued_messages WHERE session_id = $1', [sessionId]);
  assert.equal(left.rows[0]?.n, 0);
  assert.deepEqual((await queueStatus(deps, human, sessionId)).entries, []);
});
