// Pins the 2026-07-28 loop end to end on two real instances sharing one database: the
// official v2 client pinned to that revision waits on claim_next {wait_seconds} on
// instance A, is woken by a push made on instance B, and completes the todo with its
// lease token from a later request; a 2025-11-25 session on A, which declared the
// claude/channel capability, still hears the doorbell on its GET stream.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { until } from '../helpers/wait.js';
import { vend } from './harness.js';

const { pool, url } = await testDatabase('mcp_stateless_e2e');
const a = await startTestServer(url, 'stateless-e2e-a');
const b = await startTestServer(url, 'stateless-e2e-b');

/** The official v2 client pinned to 2026-07-28. */
async function modern(base: string, credential: string): Promise<ModernClient> {
  const client = new ModernClient(
    { name: 'v2-client', version: '2.4.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new ModernTransport(new URL('/mcp', base), {
      requestInit: { headers: { Authorization: `Bearer ${credential}` } },
    }),
  );
  after(() => client.close());
  return client;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tool bodies are checked field by field
type Body = any;

function bodyOf(result: { content: unknown; isError?: unknown }): Body {
  const first = (result.content as { type: string; text?: string }[])[0];
  return { ...JSON.parse(first?.text ?? 'null'), ...(result.isError ? { isError: true } : {}) };
}

/** A 2025-11-25 session that declared claude/channel, with its GET stream open, collecting channel events. */
async function channelSession(base: string, credential: string) {
  const heard: { meta: Record<string, string> }[] = [];
  const client = new Client(
    { name: 'claude-code', version: '2.0.0' },
    { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  client.fallbackNotificationHandler = async (n) => {
    if (n.method === 'notifications/claude/channel') heard.push(n.params as { meta: Record<string, string> });
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
  return { heard, sessionId };
}

test('a 2026-07-28 client waiting on A is woken by a push on B and completes with its lease token; a 2025-11-25 session on A still hears the doorbell', async () => {
  const v = await vend(pool);
  const listener = await channelSession(a.url, v.credential);
  const waiter = await modern(a.url, v.credential);
  const pusher = await modern(b.url, v.credential);

  const waiting = waiter.callTool({ name: 'claim_next', arguments: { wait_seconds: 30 } });
  await until(() => a.waiters.waiting(v.endpoint.id) === 1, 'the claim_next to wait on A');
  const pushed = bodyOf(await pusher.callTool({ name: 'create_todo', arguments: { queue: 'inbox', title: 'wake' } }));
  const claimed = bodyOf(await waiting);
  assert.equal(claimed.todo?.id, pushed.todo.id, JSON.stringify(claimed));
  assert.match(claimed.todo.owner_session_id, /^mr_/);
  assert.equal(typeof claimed.lease_token, 'string');

  // A later request is another mr_ id: without the token it never held the todo, with it it settles.
  const bare = bodyOf(await waiter.callTool({ name: 'complete', arguments: { id: pushed.todo.id } }));
  assert.equal(bare.error?.code, 'conflict', JSON.stringify(bare));
  const done = bodyOf(
    await waiter.callTool({
      name: 'complete',
      arguments: { id: pushed.todo.id, lease_token: claimed.lease_token, result: { ok: true } },
    }),
  );
  assert.equal(done.todo?.state, 'done', JSON.stringify(done));

  // With no waiter to take it, the next push on B rings the 2025-11-25 session's stream on A.
  const next = bodyOf(await pusher.callTool({ name: 'create_todo', arguments: { queue: 'inbox', title: 'ring' } }));
  await until(() => listener.heard.some((h) => h.meta.todo_id === next.todo.id), 'the doorbell on the 2025 session');
});
