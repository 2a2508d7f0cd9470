// Pins the streamless idle close (docs/design/mcp-surface.md, "Ending a session"): the
// idle_sessions sweep, as serve builds it, closes a session with no stream after
// SWITCHBOARD_MCP_STREAMLESS_IDLE without a request, unless it holds a claim (kept to the
// 30-minute rule, then closed and its claim released) or a call of it is waiting; a
// session with an open stream stays. Time is moved by back-dating last_seen_at.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { testDatabase } from '../helpers/db.js';
import { until } from '../helpers/wait.js';
import { bareSession, raw, startApp, vend } from './harness.js';

const { pool } = await testDatabase('mcp_streamless_idle');
const app = await startApp(pool, 'streamless', undefined, { env: { SWITCHBOARD_MCP_CREDENTIAL_REUSE: '0s' } });
after(() => app.services.waiters.close());

const sweep = app.services.sweeps.find((s) => s.name === 'idle_sessions');
assert.ok(sweep, 'serve runs the idle_sessions sweep');

const streamlessClosed = async () => (await app.services.metrics.sessions.streamlessClosed.get()).values[0]?.value ?? 0;

async function idleFor(minutes: number, ids: string[]): Promise<void> {
  await pool.query(`UPDATE mcp_sessions SET last_seen_at = now() - make_interval(mins => $1) WHERE id = ANY($2)`, [
    minutes,
    ids,
  ]);
}

async function closed(ids: string[]): Promise<Record<string, boolean>> {
  const res = await pool.query<{ id: string; closed: boolean }>(
    'SELECT id, closed_at IS NOT NULL AS closed FROM mcp_sessions WHERE id = ANY($1)',
    [ids],
  );
  return Object.fromEntries(res.rows.map((r) => [r.id, r.closed]));
}

/** A bare session with its notification stream open. */
async function streaming(credential: string): Promise<string> {
  const s = await bareSession(app.url, credential);
  const controller = new AbortController();
  const res = await fetch(new URL('/mcp', app.url), {
    headers: { ...s.headers, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  assert.equal(res.status, 200);
  after(() => controller.abort());
  await until(
    async () => (await pool.query('SELECT 1 FROM mcp_sessions WHERE id = $1 AND stream_open', [s.id])).rowCount === 1,
    'the stream to be recorded open',
  );
  return s.id;
}

test('the default is five minutes', () => {
  assert.equal(app.services.config.mcp.streamlessIdleSeconds, 300);
});

test('a streamless session idle past five minutes closes early; one with a claim, a stream or a waiting call stays, and a claim keeps the 30-minute rule', async () => {
  const { credential } = await vend(pool, { queues: ['inbox', 'quiet'] });
  const plain = await bareSession(app.url, credential);
  const recent = await bareSession(app.url, credential);
  const claiming = await bareSession(app.url, credential);
  const { todo } = await claiming.call('create_todo', { queue: 'inbox', title: 'held' });
  assert.ok((await claiming.call('claim', { id: todo.id })).todo);
  const streamer = await streaming(credential);
  const waiting = await bareSession(app.url, credential);
  const controller = new AbortController();
  after(() => controller.abort());
  void waiting.call('claim_next', { queue: 'quiet', wait_seconds: 60 }, controller.signal).catch(() => undefined);
  await until(
    async () =>
      (await pool.query('SELECT 1 FROM mcp_sessions WHERE id = $1 AND waiting_until > now()', [waiting.id]))
        .rowCount === 1,
    'the waiting call to be recorded',
  );
  const all = [plain.id, recent.id, claiming.id, streamer, waiting.id];
  const before = await streamlessClosed();

  await idleFor(6, all);
  await idleFor(4, [recent.id]);
  const counts = await sweep.run();
  assert.deepEqual(counts, { closed: 1, early: 1, released: 0 });
  assert.deepEqual(await closed(all), {
    [plain.id]: true,
    [recent.id]: false,
    [claiming.id]: false,
    [streamer]: false,
    [waiting.id]: false,
  });
  assert.equal((await streamlessClosed()) - before, 1);
  const gone = await raw(
    app.url,
    'POST',
    {
      authorization: `Bearer ${credential}`,
      'mcp-session-id': plain.id,
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  );
  assert.equal(gone.status, 404, 'the closed session answers Session not found');

  // The claim holder stays until the 30-minute rule, which releases its claim.
  await idleFor(29, [claiming.id]);
  assert.deepEqual(await sweep.run(), { closed: 0, early: 0, released: 0 });
  await idleFor(31, [claiming.id]);
  assert.deepEqual(await sweep.run(), { closed: 1, early: 0, released: 1 });
  const row = await pool.query<{ state: string }>('SELECT state FROM todos WHERE id = $1', [todo.id]);
  assert.equal(row.rows[0]?.state, 'pending');
  assert.equal((await streamlessClosed()) - before, 1, 'the 30-minute close is not an early one');

  // A session with an open stream is never closed by idleness.
  await idleFor(120, [streamer]);
  assert.deepEqual(await sweep.run(), { closed: 0, early: 0, released: 0 });
});
