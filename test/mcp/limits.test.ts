// Pins the limits of /mcp (docs/design/mcp-surface.md, "Limits"): the live-session cap
// per endpoint (at it an idle session is evicted; with every session busy 429 naming it,
// Retry-After, a closed session frees a slot; exact under a real concurrent burst and
// across two instances; 1,000 initialize calls leave the cap and no SDK objects), the
// per-credential rate, and the per-address bucket for requests without a valid
// credential, which refuses before any database read. test/mcp/eviction.test.ts pins
// which session an initialize evicts.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pool } from '../../src/db/pool.js';
import { createHost } from '../../src/http/app.js';
import { mcpRoutes } from '../../src/mcp/server.js';
import { testDatabase } from '../helpers/db.js';
import { testServices } from '../helpers/services.js';
import { raw, startApp, vend } from './harness.js';

const { pool } = await testDatabase('mcp_limits');

const CAP = 3;
const capped = { SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT: String(CAP) };
// The cap tests send more requests than the default rate allows in a second: it is raised
// there, and tested on its own below.
const unlimitedRate = { SWITCHBOARD_MCP_RATE: '1000000', SWITCHBOARD_MCP_BURST: '1000000' };
const a = await startApp(pool, 'limits-a', undefined, { env: { ...capped, ...unlimitedRate } });
const b = await startApp(pool, 'limits-b', undefined, { env: { ...capped, ...unlimitedRate } });

const initializeBody = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'limits', version: '0' } },
};

function initialize(url: string, credential: string, headers: Record<string, string> = {}) {
  return raw(url, 'POST', { authorization: `Bearer ${credential}`, ...headers }, initializeBody);
}

async function liveSessions(endpointId: string): Promise<number> {
  const res = await pool.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM mcp_sessions WHERE endpoint_id = $1 AND closed_at IS NULL',
    [endpointId],
  );
  return res.rows[0]?.n ?? -1;
}

/** Every live session of the endpoint busy, as a waiting call makes it (0034_session_eviction.sql). */
async function allBusy(endpointId: string): Promise<void> {
  await pool.query(
    `UPDATE mcp_sessions SET waiting_until = now() + interval '1 hour' WHERE endpoint_id = $1 AND closed_at IS NULL`,
    [endpointId],
  );
}

interface RpcRefusal {
  jsonrpc: string;
  id: null;
  error: { code: number; message: string; data: Record<string, unknown> };
}

function refusalOf(res: { status: number; headers: Headers; text: string }, limit: string): RpcRefusal {
  assert.equal(res.status, 429, res.text);
  const body = JSON.parse(res.text) as RpcRefusal;
  assert.equal(body.jsonrpc, '2.0');
  assert.equal(body.error.code, -32000);
  assert.equal(body.error.data.limit, limit);
  assert.ok(body.error.message.includes(limit), body.error.message);
  assert.equal(res.headers.get('retry-after'), String(body.error.data.retry_after_seconds));
  assert.ok(Number(res.headers.get('retry-after')) >= 1);
  return body;
}

test('at the session cap with every session busy initialize answers 429 naming the limit with Retry-After; closing a session frees a slot', async () => {
  const { endpoint, credential } = await vend(pool);
  const ids: string[] = [];
  for (let i = 0; i < CAP; i++) {
    const res = await initialize(a.url, credential);
    assert.equal(res.status, 200, res.text);
    ids.push(res.headers.get('mcp-session-id') ?? '');
  }
  await allBusy(endpoint.id);
  const refused = refusalOf(await initialize(a.url, credential), 'SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT');
  assert.equal(refused.error.data.max, CAP);
  assert.equal(refused.error.data.live, CAP);
  assert.match(refused.error.message, new RegExp(`SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT = ${CAP}\\b`));
  assert.equal(await liveSessions(endpoint.id), CAP, 'the refused initialize wrote nothing');

  // Another endpoint has slots of its own.
  const other = await vend(pool);
  assert.equal((await initialize(a.url, other.credential)).status, 200);

  const closed = await raw(a.url, 'DELETE', { authorization: `Bearer ${credential}`, 'mcp-session-id': ids[0] ?? '' });
  assert.equal(closed.status, 200);
  assert.equal((await initialize(a.url, credential)).status, 200, 'the closed session’s slot is free again');
  // The newcomer is idle: the next initialize takes its slot.
  assert.equal((await initialize(a.url, credential)).status, 200);
  assert.equal(await liveSessions(endpoint.id), CAP);
  await allBusy(endpoint.id);
  assert.equal((await initialize(a.url, credential)).status, 429);
});

test('an initialize the SDK refuses after the slot was taken gives the slot back', async () => {
  const { endpoint, credential } = await vend(pool);
  for (let i = 0; i < 5; i++) {
    const res = await initialize(a.url, credential, { accept: 'application/json' });
    assert.equal(res.status, 406, res.text);
  }
  // The row goes as the refused request is released, just after its answer.
  const rows = () => pool.query('SELECT 1 FROM mcp_sessions WHERE endpoint_id = $1', [endpoint.id]);
  for (let i = 0; i < 100 && (await rows()).rowCount !== 0; i++) await new Promise((r) => setTimeout(r, 20));
  assert.equal((await rows()).rowCount, 0, 'every refused initialize left nothing behind');
  for (let i = 0; i < CAP; i++) assert.equal((await initialize(a.url, credential)).status, 200);
});

test('a concurrent burst of initialize calls leaves exactly the cap, each past it evicting an idle session', async () => {
  const { endpoint, credential } = await vend(pool);
  const answers = await Promise.all(Array.from({ length: 64 }, () => initialize(a.url, credential)));
  const statuses = answers.map((r) => r.status);
  assert.equal(statuses.filter((s) => s === 200).length, 64, statuses.join(','));
  assert.equal(await liveSessions(endpoint.id), CAP);
  await allBusy(endpoint.id);
  const refused = await Promise.all(Array.from({ length: 16 }, () => initialize(a.url, credential)));
  assert.deepEqual(
    refused.map((r) => r.status),
    Array.from({ length: 16 }, () => 429),
  );
  assert.equal(await liveSessions(endpoint.id), CAP);
});

test('two instances on one database share the cap, one at a time and in a burst split between them', async () => {
  const one = await vend(pool);
  assert.equal((await initialize(a.url, one.credential)).status, 200);
  assert.equal((await initialize(b.url, one.credential)).status, 200);
  assert.equal((await initialize(a.url, one.credential)).status, 200);
  assert.equal((await initialize(b.url, one.credential)).status, 200, 'an idle session of instance A made room');
  assert.equal(await liveSessions(one.endpoint.id), CAP);
  await allBusy(one.endpoint.id);
  refusalOf(await initialize(b.url, one.credential), 'SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT');
  refusalOf(await initialize(a.url, one.credential), 'SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT');

  const two = await vend(pool);
  const answers = await Promise.all(
    Array.from({ length: 64 }, (_, i) => initialize(i % 2 === 0 ? a.url : b.url, two.credential)),
  );
  assert.equal(answers.filter((r) => r.status === 200).length, 64);
  assert.equal(await liveSessions(two.endpoint.id), CAP);
});

test('1,000 initialize calls of one credential (none ending its session) leave the default cap of sessions and no SDK objects in memory', async () => {
  // Only the MCP surface, so the test can read what its registry holds.
  const services = await testServices({ pool, instanceId: 'limits-memory', env: unlimitedRate });
  assert.equal(services.config.mcp.sessionsPerEndpoint, 100, 'the documented default');
  const app = createHost({
    log: services.log,
    trustProxy: [],
    allowedHosts: services.config.allowedHosts,
    connections: services.config.connections,
  });
  const registry = mcpRoutes(app, services);
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    const address = app.server.address();
    assert.ok(address && typeof address === 'object');
    const url = `http://127.0.0.1:${address.port}`;
    const { endpoint, credential } = await vend(pool);
    const statuses: number[] = [];
    for (let batch = 0; batch < 20; batch++) {
      const answers = await Promise.all(Array.from({ length: 50 }, () => initialize(url, credential)));
      for (const res of answers) {
        statuses.push(res.status);
        if (res.status === 429) refusalOf(res, 'SWITCHBOARD_MCP_SESSIONS_PER_ENDPOINT');
      }
    }
    assert.equal(statuses.length, 1000);
    assert.equal(statuses.filter((s) => s === 200).length, 1000, 'each past the cap evicted an idle one');
    assert.equal(await liveSessions(endpoint.id), 100);
    // What a session costs between requests: nothing here. The SDK objects of every
    // answered request are released; the sessions are rows.
    assert.equal(registry.inFlight, 0);
  } finally {
    await app.close();
  }
});

test('past the per-credential burst every /mcp request answers 429 with Retry-After until the bucket refills', async () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const app = await startApp(pool, 'limits-rate', undefined, {
    env: { SWITCHBOARD_MCP_RATE: '1', SWITCHBOARD_MCP_BURST: '3' },
    clock: () => new Date(now),
  });
  const { credential } = await vend(pool);
  const first = await initialize(app.url, credential);
  assert.equal(first.status, 200);
  const session = first.headers.get('mcp-session-id') ?? '';
  const headers = {
    authorization: `Bearer ${credential}`,
    'mcp-session-id': session,
    'mcp-protocol-version': '2025-06-18',
  };
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
  assert.equal((await raw(app.url, 'POST', headers, list)).status, 200);
  assert.equal((await raw(app.url, 'POST', headers, list)).status, 200);
  const refused = await raw(app.url, 'POST', headers, list);
  const body = refusalOf(refused, 'SWITCHBOARD_MCP_RATE');
  assert.deepEqual(body.error.data, { limit: 'SWITCHBOARD_MCP_RATE', rate: 1, burst: 3, retry_after_seconds: 1 });
  assert.match(refused.headers.get('ratelimit') ?? '', /"mcp";r=0/);
  assert.equal(
    refusalOf(await initialize(app.url, credential), 'SWITCHBOARD_MCP_RATE').error.data.retry_after_seconds,
    1,
  );

  // Another credential is not held back; a second later this one may send again.
  assert.equal((await initialize(app.url, (await vend(pool)).credential)).status, 200);
  now += 1000;
  assert.equal((await raw(app.url, 'POST', headers, list)).status, 200);
});

test('a JSON-RPC batch is charged one token per message: it cannot carry more calls than the bucket holds', async () => {
  let now = Date.parse('2026-01-01T00:00:00Z');
  const app = await startApp(pool, 'limits-batch', undefined, {
    env: { SWITCHBOARD_MCP_RATE: '1', SWITCHBOARD_MCP_BURST: '5' },
    clock: () => new Date(now),
  });
  const { credential } = await vend(pool);
  const first = await initialize(app.url, credential);
  assert.equal(first.status, 200);
  const headers = {
    authorization: `Bearer ${credential}`,
    'mcp-session-id': first.headers.get('mcp-session-id') ?? '',
    'mcp-protocol-version': '2025-03-26',
  };
  const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
  // Four tokens left: a batch of three is charged three, and a second batch of three is refused.
  assert.equal((await raw(app.url, 'POST', headers, [list(1), list(2), list(3)])).status, 200);
  const refused = await raw(app.url, 'POST', headers, [list(4), list(5), list(6)]);
  const body = refusalOf(refused, 'SWITCHBOARD_MCP_RATE');
  assert.equal(body.error.data.retry_after_seconds, 2);
  // The one token left still takes a single request.
  assert.equal((await raw(app.url, 'POST', headers, list(7))).status, 200);
  // A batch larger than the whole burst could never pass: refused as invalid, not told to retry.
  now += 60_000;
  const huge = await raw(app.url, 'POST', headers, [1, 2, 3, 4, 5, 6].map(list));
  assert.equal(huge.status, 400, huge.text);
  assert.equal(JSON.parse(huge.text).error.code, -32600);
  assert.match(JSON.parse(huge.text).error.message, /SWITCHBOARD_MCP_BURST = 5/);
});

/** The pool, counting every statement and connection it is asked for. */
function counting(real: Pool): { pool: Pool; reads: () => number } {
  let n = 0;
  const pool = new Proxy(real, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key);
      if (key === 'query' || key === 'connect') {
        return (...args: unknown[]) => {
          n += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { pool, reads: () => n };
}

test('requests without a valid credential are limited per address, and past the limit make no database read', async () => {
  const db = counting(pool);
  const { credential } = await vend(pool);
  const app = await startApp(db.pool, 'limits-unauthenticated', undefined, {
    env: {
      SWITCHBOARD_TRUST_PROXY: '127.0.0.1/32',
      SWITCHBOARD_MCP_UNAUTH_RATE_PER_IP: '1',
      SWITCHBOARD_MCP_UNAUTH_BURST_PER_IP: '4',
    },
    clock: () => new Date('2026-01-01T00:00:00Z'),
  });
  const from = (address: string, bearer?: string) =>
    initialize(app.url, 'x', { 'x-forwarded-for': address, authorization: bearer ? `Bearer ${bearer}` : '' });

  // No credential, or a malformed one: never looked up, refused 401 until the bucket is spent.
  const before = db.reads();
  for (const bearer of [undefined, 'nope', 'sbk_short', undefined])
    assert.equal((await from('192.0.2.1', bearer)).status, 401);
  assert.equal(db.reads(), before, 'a missing or malformed credential is never looked up');
  refusalOf(await from('192.0.2.1'), 'SWITCHBOARD_MCP_UNAUTH_RATE_PER_IP');
  // Past it, even a well-formed credential from that address is refused before its lookup.
  const guess = `sbk_${'A'.repeat(43)}`;
  for (let i = 0; i < 50; i++) refusalOf(await from('192.0.2.1', guess), 'SWITCHBOARD_MCP_UNAUTH_RATE_PER_IP');
  assert.equal(db.reads(), before, 'the flood made no database read');

  // Well-formed guesses are looked up and spend the bucket of their address: two reads
  // each, the current credentials and then the ones in a rotation's grace
  // (docs/design/mcp-surface.md, "Rotating a credential").
  for (let i = 0; i < 4; i++) assert.equal((await from('192.0.2.2', guess)).status, 401);
  const looked = db.reads();
  assert.equal(looked - before, 8);
  for (let i = 0; i < 20; i++) refusalOf(await from('192.0.2.2', guess), 'SWITCHBOARD_MCP_UNAUTH_RATE_PER_IP');
  assert.equal(db.reads(), looked);

  // A working credential spends nothing from its address's bucket.
  for (let i = 0; i < 6; i++) assert.equal((await from('192.0.2.3', credential)).status, 200);
});
