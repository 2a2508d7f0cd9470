// Found by the reliability suite (chaos/): when PostgreSQL cuts a server connection in the
// middle of a request (pg_terminate_backend, a restart), the agent was answered `internal`
// (a tool error) or HTTP 500, as if the server had a bug. A lost database connection is
// `unavailable` — retry shortly — on the MCP edge and on HTTP (503) alike.
//
// Each case parks the server's statement behind a table lock held by this test, finds the
// waiting backend, terminates it, and reads the answer.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { toolError } from '../helpers/tool-result.js';
import { connect, vend } from './harness.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';

const { pool, url } = await testDatabase('mcp_connection_lost');
const server = await startTestServer(url, 'lost-a');

/**
 * Runs `request` while `table` is locked, terminating every backend that waits on the
 * lock (the request's, and any sweep's that happens to queue behind it) until it answers.
 */
async function cutWhileWaiting<T>(table: string, request: () => Promise<T>): Promise<T> {
  const locker = await pool.connect();
  try {
    await locker.query('BEGIN');
    await locker.query(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    let settled = false;
    const answer = request().finally(() => (settled = true));
    let terminated = 0;
    for (let tries = 0; !settled && tries < 400; tries++) {
      const res = await pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
      );
      terminated += res.rowCount ?? 0;
      await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(terminated > 0, 'a waiting server backend was terminated');
    return await answer;
  } finally {
    await locker.query('ROLLBACK');
    locker.release();
  }
}

test('a tool call whose database connection is cut answers unavailable, not internal', async () => {
  const v = await vend(pool);
  const c = await connect(server.url, v.credential);
  const result = await cutWhileWaiting('todos', () => c.client.callTool({ name: 'list_todos', arguments: {} }));
  assert.equal(toolError(result).code, 'unavailable', JSON.stringify(result));
});

test('a request whose credential lookup loses its connection answers 503 unavailable, not 500', async () => {
  const v = await vend(pool);
  const res = await cutWhileWaiting('endpoints', () =>
    fetch(`${server.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${v.credential}`,
        accept: 'application/json, text/event-stream',
        'content-type': 'application/json',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    }),
  );
  const body = (await res.json()) as { error?: { code?: string } };
  assert.equal(res.status, 503, JSON.stringify(body));
  assert.equal(body.error?.code, 'unavailable');
});
