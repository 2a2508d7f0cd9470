// Pins how a session's stream is recorded (src/store/sessions.ts setStreamOpen): a new
// stream takes the session from whichever instance held it; a reopen after an instance was
// taken for dead (ifFree) takes back only a stream nobody else holds open; a close is
// recorded only by the instance holding the stream.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setStreamOpen } from '../../src/store/sessions.js';
import { testDatabase } from '../helpers/db.js';
import { makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('stream_marks');

async function session(instance: string, open: boolean) {
  const endpoint = await makeEndpoint(pool);
  const id = `ms_${endpoint.id}`;
  await pool.query(`INSERT INTO mcp_sessions (endpoint_id, id, instance, stream_open) VALUES ($1, $2, $3, $4)`, [
    endpoint.id,
    id,
    instance,
    open,
  ]);
  const row = async () =>
    (await pool.query('SELECT instance, stream_open FROM mcp_sessions WHERE id = $1', [id])).rows[0] as {
      instance: string;
      stream_open: boolean;
    };
  return { endpointId: endpoint.id, id, row };
}

test('a new stream takes the session from another instance', async () => {
  const s = await session('b', true);
  await setStreamOpen(pool, { endpointId: s.endpointId, id: s.id, instance: 'a', open: true });
  assert.deepEqual(await s.row(), { instance: 'a', stream_open: true });
});

test('a reopen after a stall leaves a stream another instance holds open, and its late close changes nothing', async () => {
  const s = await session('b', true);
  await setStreamOpen(pool, { endpointId: s.endpointId, id: s.id, instance: 'a', open: true, ifFree: true });
  assert.deepEqual(await s.row(), { instance: 'b', stream_open: true });
  // The revived instance then sees its old socket close: not its stream, nothing recorded.
  await setStreamOpen(pool, { endpointId: s.endpointId, id: s.id, instance: 'a', open: false });
  assert.deepEqual(await s.row(), { instance: 'b', stream_open: true });
});

test('a reopen takes back a stream that was marked closed, or that it still holds', async () => {
  const closed = await session('a', false);
  await setStreamOpen(pool, { endpointId: closed.endpointId, id: closed.id, instance: 'a', open: true, ifFree: true });
  assert.deepEqual(await closed.row(), { instance: 'a', stream_open: true });
  const closedElsewhere = await session('b', false);
  await setStreamOpen(pool, {
    endpointId: closedElsewhere.endpointId,
    id: closedElsewhere.id,
    instance: 'a',
    open: true,
    ifFree: true,
  });
  assert.deepEqual(await closedElsewhere.row(), { instance: 'a', stream_open: true });
  const own = await session('a', true);
  await setStreamOpen(pool, { endpointId: own.endpointId, id: own.id, instance: 'a', open: true, ifFree: true });
  assert.deepEqual(await own.row(), { instance: 'a', stream_open: true });
});
