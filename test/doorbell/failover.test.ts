// Pins the doorbell when the instance holding a stream dies (kill -9): the work stays
// claimable, and once the session's stream is back on another instance its attach ring,
// then the re-ring, reach it there. (Until the dead-instance sweep finds the killed instance, 15 s by
// default, the session's row still names it, so the creation ring is forwarded there and
// lost; test/reliability/instance-liveness.test.ts pins how it is rung again after that.)

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import { startServer } from '../../src/main.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { vend } from '../mcp/harness.js';
import { until } from '../helpers/wait.js';

const { pool, url } = await testDatabase('doorbell_failover');
const BIN = fileURLToPath(new URL('../../bin/switchboard.js', import.meta.url));

async function freePort(): Promise<number> {
  const probe = createServer().listen(0, '127.0.0.1');
  await once(probe, 'listening');
  const address = probe.address();
  probe.close();
  assert.ok(address && typeof address === 'object');
  return address.port;
}

/** A `serve` child on the test database; killed at the end if still running. */
async function serve(instance: string): Promise<{ base: string; child: ChildProcess }> {
  const port = await freePort();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_')));
  const child = spawn(process.execPath, [BIN, 'serve'], {
    env: {
      ...env,
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
  for (const deadline = Date.now() + 60_000; Date.now() < deadline;) {
    if (
      (await fetch(`${base}/readyz`).then(
        (r) => r.status,
        () => 0,
      )) === 200
    )
      return { base, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.fail(`serve ${instance} did not become ready`);
}

function clientOn(base: string, credential: string, heard: string[], sessionId?: string) {
  const client = new Client(
    { name: 'failover', version: '1' },
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
    ...(sessionId ? { sessionId } : {}),
  });
  return { client, transport };
}

const streamOn = async (sessionId: string, instance: string) => {
  const res = await pool.query('SELECT stream_open, instance FROM mcp_sessions WHERE id = $1', [sessionId]);
  return res.rows[0]?.stream_open === true && res.rows[0]?.instance === instance;
};

/** Opens the session's notification stream on `base` by hand, collecting channel todo ids. */
async function rawStream(base: string, credential: string, sessionId: string, heard: string[]) {
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

test('after the stream holder is killed, the todo stays claimable; the stream reopened elsewhere hears it on attach, and the re-ring there', async () => {
  const a = await serve('fail-a');
  const parsed = parseConfig({
    SWITCHBOARD_DATABASE_URL: url,
    SWITCHBOARD_LISTEN: '127.0.0.1:0',
    SWITCHBOARD_INSTANCE_ID: 'fail-b',
    SWITCHBOARD_DB_POOL_SIZE: '4',
  });
  assert.ok(parsed.ok);
  const b = await startServer(parsed.config, pino({ level: 'silent' }));
  after(() => b.stop());
  const { endpoint, humanId, credential } = await vend(pool);
  const heard: string[] = [];
  const first = clientOn(a.base, credential, heard);
  await first.client.connect(first.transport);
  const sessionId = first.transport.sessionId ?? '';
  await until(() => streamOn(sessionId, 'fail-a'), 'the stream on A');

  a.child.kill('SIGKILL');
  await once(a.child, 'exit');
  const { todo } = await createTodo(
    { db: pool, defaultLeaseSeconds: 300 },
    { endpointId: endpoint.id },
    { humanId },
    { queue: 'inbox', title: 'Survives the crash' },
  );
  // The ring went to the dead instance (its row still says the stream is there): lost.
  await until(
    async () =>
      (await pool.query('SELECT ring_attempts FROM todos WHERE id = $1', [todo.id])).rows[0]?.ring_attempts === 1,
    'the lost ring',
  );

  // The same session's stream reopens on B: its attach pass rings what went to the dead stream.
  await rawStream(b.url, credential, sessionId, heard);
  await until(() => heard.includes(todo.id), 'the attach ring on the stream reopened on B');
  await b.doorbell.settle();

  // Unanswered, twenty minutes on (its second ring is the re-ring schedule's second step),
  // the heartbeat re-ring reaches it there again. (Touching the
  // todo while the attach pass runs would race it: the pass skips a locked row.)
  await pool.query(
    `UPDATE todos SET created_at = now() - interval '21 minutes', last_ringed_at = now() - interval '2 minutes' WHERE id = $1`,
    [todo.id],
  );
  await pool.query(`UPDATE mcp_sessions SET last_rung_at = now() - interval '2 minutes' WHERE id = $1`, [sessionId]);
  await b.doorbell.rering();
  await until(() => heard.filter((id) => id === todo.id).length === 2, 'a re-ring on the stream reopened on B');

  // And the work was claimable all along, from any instance.
  const second = clientOn(b.url, credential, [], sessionId);
  await second.client.connect(second.transport);
  after(() => second.client.close());
  const claimed = (await second.client.callTool({ name: 'claim_next', arguments: {} })) as {
    structuredContent: { todo?: { id: string } };
  };
  assert.equal(claimed.structuredContent.todo?.id, todo.id);
});
