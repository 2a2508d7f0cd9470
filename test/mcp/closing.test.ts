// Pins how sessions end across instances: DELETE on one instance and revoking the
// endpoint end the notification streams another instance holds, and a revoked
// endpoint's sessions are closed and its credential refused at once.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { NotifyBus } from '../../src/db/bus.js';
import { revokeEndpoint, showEndpoint } from '../../src/endpoints/manage.js';
import { revokeEndpoint as revokeInDatabase } from '../../src/store/endpoints.js';
import { closeSession as closeInDatabase } from '../../src/store/sessions.js';
import { idleSessionSweep } from '../../src/sweeps/sessions.js';
import { testDatabase } from '../helpers/db.js';
import { connect, ok, raw, startApp, vend } from './harness.js';

const { pool, url } = await testDatabase('mcp_closing');
const bus = new NotifyBus({ url });
await bus.start();
after(() => bus.stop());
// Credential answers are reused far longer than the tests wait (2 s in production), so
// a refusal below is the bus's doing or the expiry check's, never the reuse running out.
const a = await startApp(pool, 'instance-a', bus, { env: { SWITCHBOARD_MCP_CREDENTIAL_REUSE: '10m' } });
const b = await startApp(pool, 'instance-b', bus, { env: { SWITCHBOARD_MCP_CREDENTIAL_REUSE: '10m' } });

/** Opens the session's notification stream on `base`; resolves `ended` when the server ends it. */
async function openStream(base: string, credential: string, sessionId: string) {
  const response = await fetch(`${base}/mcp`, {
    headers: { authorization: `Bearer ${credential}`, 'mcp-session-id': sessionId, accept: 'text/event-stream' },
  });
  assert.equal(response.status, 200);
  const reader = response.body?.getReader();
  assert.ok(reader);
  const ended = (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true }));
      if (chunk.done) return true;
    }
  })();
  return { ended };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms)),
  ]);
}

test('DELETE on one instance ends the stream another instance holds for that session', async () => {
  const { credential } = await vend(pool);
  const c = await connect(a.url, credential);
  const stream = await openStream(b.url, credential, c.sessionId);
  await c.transport.terminateSession();
  assert.equal(await within(stream.ended, 5_000, 'the stream on instance B ending'), true);
});

test('revoking an endpoint closes its sessions, ends their streams everywhere, and refuses the credential', async () => {
  const { humanId, endpoint, credential } = await vend(pool);
  const c = await connect(a.url, credential);
  await ok(c, 'create_todo', { queue: 'inbox', title: 'left behind' });
  const stream = await openStream(b.url, credential, c.sessionId);
  // Revoked through instance A's process: its credential answers go at once, B's by the bus.
  const deps = { db: pool, publicUrl: 'http://switchboard.test', credentials: a.services.credentials };
  const shown = await showEndpoint(deps, humanId, endpoint.slug, new Date());
  assert.deepEqual(
    shown.sessions.map((s) => [s.id, s.client_name, s.stream_open]),
    [[c.sessionId, 'test-client', true]],
  );

  const revoked = await revokeEndpoint(deps, humanId, endpoint.slug, new Date());
  assert.equal(revoked.dead_lettered, 1);
  assert.equal(await within(stream.ended, 5_000, 'the stream on instance B ending'), true);

  const rows = await pool.query('SELECT closed_at, stream_open FROM mcp_sessions WHERE endpoint_id = $1', [
    endpoint.id,
  ]);
  assert.ok(rows.rows.every((r) => r.closed_at !== null && r.stream_open === false));
  const headers = { authorization: `Bearer ${credential}`, 'mcp-session-id': c.sessionId };
  for (const base of [a.url, b.url]) {
    const res = await raw(base, 'POST', headers, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    assert.equal(res.status, 401, base);
  }
});

/** Calls tools/list on `base` until it answers `status`, which must happen within 5 s. */
async function answers(base: string, headers: Record<string, string>, status: number, what: string) {
  const until = (async () => {
    for (;;) {
      const res = await raw(base, 'POST', headers, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
      if (res.status === status) return;
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  await within(until, 5_000, what);
}

// Each instance reuses a (credential, live session) answer between calls
// (endpoints/credentials.ts). The revocation above is made through this process, which
// drops it at once; these are made by "another process" (straight in the database), so
// only the bus's endpoint_revoked / session_closed can drop it, or the endpoint's expiry.
test('a reused credential answer is dropped when another process revokes the endpoint or closes the session', async () => {
  const { endpoint, credential } = await vend(pool);
  const c = await connect(a.url, credential);
  await ok(c, 'whoami');
  const headers = { authorization: `Bearer ${credential}`, 'mcp-session-id': c.sessionId };
  await answers(b.url, headers, 200, 'a call on instance B');
  await closeInDatabase(pool, endpoint.id, c.sessionId);
  await answers(b.url, headers, 404, 'instance B refusing the closed session');

  const other = await vend(pool);
  const d = await connect(a.url, other.credential);
  await ok(d, 'whoami');
  await revokeInDatabase(pool, other.endpoint.id);
  const otherHeaders = { authorization: `Bearer ${other.credential}`, 'mcp-session-id': d.sessionId };
  await answers(a.url, otherHeaders, 401, 'instance A refusing the revoked credential');
  await answers(b.url, otherHeaders, 401, 'instance B refusing the revoked credential');
});

test('a reused credential answer is refused once the endpoint expires', async () => {
  const expiresAt = new Date(Date.now() + 1_500);
  const { credential } = await vend(pool, { expires_at: expiresAt.toISOString() });
  const c = await connect(a.url, credential);
  await ok(c, 'whoami');
  const headers = { authorization: `Bearer ${credential}`, 'mcp-session-id': c.sessionId };
  await answers(a.url, headers, 200, 'a call before the expiry');
  await new Promise((r) => setTimeout(r, Math.max(0, expiresAt.getTime() - Date.now())));
  const res = await raw(a.url, 'POST', headers, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
  assert.equal(res.status, 401);
});

test('a session idle for 30 minutes without a stream is closed; one with an open stream is kept', async () => {
  const { credential } = await vend(pool);
  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'no-stream', version: '0' } },
  };
  const headers = { authorization: `Bearer ${credential}` };
  const response = await raw(a.url, 'POST', headers, initialize);
  const idle = response.headers.get('mcp-session-id') ?? '';
  assert.ok(idle);
  const streaming = await connect(a.url, credential);
  await openStream(b.url, credential, streaming.sessionId);
  await pool.query(`UPDATE mcp_sessions SET last_seen_at = now() - interval '31 minutes' WHERE id = ANY($1)`, [
    [idle, streaming.sessionId],
  ]);

  const result = await idleSessionSweep(pool).run();
  assert.ok((result?.closed ?? 0) >= 1);
  const rows = await pool.query<{ id: string; closed: boolean }>(
    'SELECT id, closed_at IS NOT NULL AS closed FROM mcp_sessions WHERE id = ANY($1)',
    [[idle, streaming.sessionId]],
  );
  assert.deepEqual(Object.fromEntries(rows.rows.map((r) => [r.id, r.closed])), {
    [idle]: true,
    [streaming.sessionId]: false,
  });
  const again = await raw(
    a.url,
    'POST',
    { ...headers, 'mcp-session-id': idle },
    { jsonrpc: '2.0', id: 2, method: 'tools/list' },
  );
  assert.equal(again.status, 404);
});
