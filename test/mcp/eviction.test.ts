// Pins sessions that do not pile up (docs/design/mcp-surface.md, "Limits"): at the cap an
// initialize closes the endpoint's session idle longest, never one holding a claim, an open
// stream or a waiting call, and is refused 429 only when every session is busy — exact
// under a burst released by a barrier on two instances; evictions are counted.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { testDatabase } from '../helpers/db.js';
import { until } from '../helpers/wait.js';
import { bareSession, connect, ok, raw, startApp, vend } from './harness.js';

const { pool } = await testDatabase('mcp_eviction');

const CAP = 5;
// No reuse of a credential answer: a closed session is refused at once on either instance.
const env = {
  SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT: String(CAP),
  SWITCHBOARD_MCP_RATE: '1000000',
  SWITCHBOARD_MCP_BURST: '1000000',
  SWITCHBOARD_MCP_CREDENTIAL_REUSE: '0s',
};
const a = await startApp(pool, 'evict-a', undefined, { env });
const b = await startApp(pool, 'evict-b', undefined, { env });
// The waiting calls end with the file, as shutdown ends them.
after(() => [a, b].forEach((app) => app.services.waiters.close()));

const initializeBody = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'evict', version: '0' } },
};

/** A bare initialize (a one-shot client): its session id, or the refusal. */
async function initialize(url: string, credential: string): Promise<{ status: number; id: string; text: string }> {
  const res = await raw(url, 'POST', { authorization: `Bearer ${credential}` }, initializeBody);
  return { status: res.status, id: res.headers.get('mcp-session-id') ?? '', text: res.text };
}

async function live(endpointId: string): Promise<Set<string>> {
  const res = await pool.query<{ id: string }>(
    'SELECT id FROM mcp_sessions WHERE endpoint_id = $1 AND closed_at IS NULL',
    [endpointId],
  );
  return new Set(res.rows.map((r) => r.id));
}

async function evicted(): Promise<number> {
  let n = 0;
  for (const app of [a, b]) n += (await app.services.metrics.sessions.evicted.get()).values[0]?.value ?? 0;
  return n;
}

/** An endpoint with work on `inbox` and none on `quiet`, where a waiting call waits. */
async function endpointWithWork(todos: number) {
  const vended = await vend(pool, { queues: ['inbox', 'quiet'] });
  const maker = await connect(a.url, vended.credential, 'maker');
  for (let i = 0; i < todos; i++) await ok(maker, 'create_todo', { queue: 'inbox', title: `work ${i}` });
  await maker.transport.terminateSession();
  assert.equal((await live(vended.endpoint.id)).size, 0);
  return vended;
}

/** Whether the session's row says a stream is open (the bare sessions below open none). */
async function streamOpen(id: string): Promise<boolean> {
  return (await pool.query('SELECT 1 FROM mcp_sessions WHERE id = $1 AND stream_open', [id])).rowCount === 1;
}

/** A session holding a claim, with no stream and no wait. */
async function claimer(url: string, credential: string): Promise<string> {
  const s = await bareSession(url, credential);
  assert.ok((await s.call('claim_next', { queue: 'inbox' })).todo);
  assert.equal(await streamOpen(s.id), false);
  return s.id;
}

/** A session whose notification stream is open on `url`, with no claim and no wait. */
async function streamer(url: string, credential: string): Promise<string> {
  const s = await bareSession(url, credential);
  const controller = new AbortController();
  const res = await fetch(new URL('/mcp', url), {
    headers: { ...s.headers, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  assert.equal(res.status, 200);
  after(() => controller.abort());
  await until(() => streamOpen(s.id), 'the stream to be recorded open');
  return s.id;
}

/** A session with a claim_next waiting (wait_seconds) on the empty queue, recorded as waiting; no stream, no claim. */
async function waiter(url: string, credential: string): Promise<string> {
  const s = await bareSession(url, credential);
  const controller = new AbortController();
  after(() => controller.abort());
  void s.call('claim_next', { queue: 'quiet', wait_seconds: 60 }, controller.signal).catch(() => undefined);
  await until(
    async () =>
      (
        await pool.query(`SELECT 1 FROM mcp_sessions WHERE id = $1 AND waiting_until > now() + interval '30 seconds'`, [
          s.id,
        ])
      ).rowCount === 1,
    'the waiting call to be recorded',
  );
  assert.equal(await streamOpen(s.id), false);
  return s.id;
}

test('at the cap initialize closes the idle session idle longest, never one with a claim, a stream or a waiting call; all busy answers 429', async () => {
  const { endpoint, credential } = await endpointWithWork(3);
  const before = await evicted();
  const claiming = await claimer(a.url, credential);
  const streaming = await streamer(b.url, credential);
  const older = (await initialize(a.url, credential)).id;
  const waiting = await waiter(b.url, credential);
  const newer = (await initialize(b.url, credential)).id;
  const busy = [claiming, streaming, waiting];
  assert.equal((await live(endpoint.id)).size, CAP);

  const first = await initialize(a.url, credential);
  assert.equal(first.status, 200, first.text);
  assert.deepEqual(await live(endpoint.id), new Set([...busy, newer, first.id]), 'the older idle session went');
  const gone = await raw(
    b.url,
    'POST',
    { authorization: `Bearer ${credential}`, 'mcp-session-id': older, 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  );
  assert.equal(gone.status, 404, 'the evicted session is closed on every instance');
  const purged = await pool.query(
    'SELECT generation FROM queue_session_locks WHERE endpoint_id = $1 AND session_id = $2',
    [endpoint.id, older],
  );
  assert.equal(purged.rowCount, 1, 'its message queue was purged as every close purges it');

  const second = await initialize(b.url, credential);
  assert.equal(second.status, 200);
  assert.deepEqual(await live(endpoint.id), new Set([...busy, first.id, second.id]));
  assert.equal((await evicted()) - before, 2);

  // Every session busy: the two idle ones claim.
  for (const id of [first.id, second.id]) {
    const headers = {
      authorization: `Bearer ${credential}`,
      'mcp-session-id': id,
      'mcp-protocol-version': LATEST_PROTOCOL_VERSION,
    };
    const call = {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'claim_next', arguments: { queue: 'inbox' } },
    };
    const res = await raw(a.url, 'POST', headers, call);
    assert.equal(res.status, 200, res.text);
    assert.match(res.text, /"lease_expires_at"/);
  }
  const refused = await initialize(a.url, credential);
  assert.equal(refused.status, 429, refused.text);
  const body = JSON.parse(refused.text) as { error: { message: string; data: Record<string, unknown> } };
  assert.match(body.error.message, new RegExp(`SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT = ${CAP}\\b`));
  assert.match(body.error.message, /busy/);
  assert.deepEqual(body.error.data, {
    limit: 'SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT',
    max: CAP,
    live: CAP,
    retry_after_seconds: 60,
  });
  assert.equal((await live(endpoint.id)).size, CAP, 'the refusal closed nothing');
  assert.equal((await evicted()) - before, 2, 'a refusal evicts nothing');
});

/** Resolves every racer's start at once. */
function barrier(): { wait: Promise<void>; open: () => void } {
  let open = () => undefined as void;
  const wait = new Promise<void>((resolve) => (open = resolve));
  return { wait, open };
}

test('a burst of initialize calls on two instances keeps the cap, spares the busy sessions and evicts the idle oldest first', async () => {
  const { endpoint, credential } = await endpointWithWork(1);
  const before = await evicted();
  const idle = [(await initialize(a.url, credential)).id, (await initialize(b.url, credential)).id];
  const busy = [await claimer(b.url, credential), await streamer(a.url, credential), await waiter(a.url, credential)];
  assert.equal((await live(endpoint.id)).size, CAP);

  const gate = barrier();
  let racing = true;
  let most = 0;
  const watch = (async () => {
    while (racing) most = Math.max(most, (await live(endpoint.id)).size);
  })();
  const BURST = 40;
  const answers = Promise.all(
    Array.from({ length: BURST }, async (_, i) => {
      await gate.wait;
      return initialize(i % 2 === 0 ? a.url : b.url, credential);
    }),
  );
  gate.open();
  const results = await answers;
  racing = false;
  await watch;

  assert.deepEqual(
    results.map((r) => r.status),
    Array.from({ length: BURST }, () => 200),
    'two idle slots: every initialize finds one to take',
  );
  const after = await live(endpoint.id);
  assert.equal(after.size, CAP);
  assert.ok(most <= CAP, `never more than the cap live (saw ${most})`);
  for (const id of busy) assert.ok(after.has(id), `busy session ${id} kept`);
  for (const id of idle) assert.ok(!after.has(id), `the older idle session ${id} went first`);
  assert.equal((await evicted()) - before, BURST, 'one eviction per initialize');
  const closed = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM mcp_sessions WHERE endpoint_id = $1 AND closed_at IS NOT NULL AND id <> ALL($2)',
    [endpoint.id, busy],
  );
  assert.equal(closed.rows[0]?.n, BURST + 1, 'every eviction closed a different session (and the maker)');
});

test('a burst of initialize calls on two instances when every session is busy is refused 429, closing nothing', async () => {
  const { endpoint, credential } = await endpointWithWork(CAP);
  const before = await evicted();
  for (let i = 0; i < CAP; i++) await claimer(i % 2 === 0 ? a.url : b.url, credential);
  const sessions = await live(endpoint.id);
  const gate = barrier();
  const answers = Promise.all(
    Array.from({ length: 20 }, async (_, i) => {
      await gate.wait;
      return initialize(i % 2 === 0 ? a.url : b.url, credential);
    }),
  );
  gate.open();
  const statuses = (await answers).map((r) => r.status);
  assert.deepEqual(
    statuses,
    Array.from({ length: 20 }, () => 429),
  );
  assert.deepEqual(await live(endpoint.id), sessions);
  assert.equal((await evicted()) - before, 0);
});
