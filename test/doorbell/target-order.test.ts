// Pins which open stream the doorbell rings when none was rung yet: the oldest session by
// created_at, never by id (session ids are random: docs/design/mcp-surface.md, "Why random
// session ids").

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { claimRings } from '../../src/store/rings.js';
import { insertSession } from '../../src/store/sessions.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('ring_target_order');

test('among never-rung open streams the oldest session is rung first, whatever the order of the ids', async () => {
  const ep = await makeEndpoint(pool);
  // Ids that sort the other way round from the sessions' ages.
  const older = 'ms_ZZZZZZZZZZZZZZZZZZZZZZZZZZ';
  const younger = 'ms_00000000000000000000000000';
  for (const [id, age] of [
    [older, '2 minutes'],
    [younger, '1 minute'],
  ] as const) {
    await insertSession(pool, { endpointId: ep.id, id, clientName: 'c', clientVersion: '1', instance: 'i' });
    await pool.query(
      `UPDATE mcp_sessions SET stream_open = true, created_at = now() - $3::interval WHERE endpoint_id = $1 AND id = $2`,
      [ep.id, id, age],
    );
  }
  await createTodo(
    { db: pool, defaultLeaseSeconds: 300 },
    { endpointId: ep.id },
    { humanId: ep.human_id },
    {
      queue: 'inbox',
      title: 'ring me',
    },
  );
  const rung = await claimRings(pool, {
    endpointId: ep.id,
    maxRings: 6,
    limit: 10,
    reason: { kind: 'ready', queue: 'inbox' },
  });
  assert.deepEqual(
    rung.map((r) => r.session_id),
    [older],
  );
});
