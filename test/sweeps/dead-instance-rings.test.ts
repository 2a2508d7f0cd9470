// Pins which rings a dead instance gives back: the todos rung through it from one
// heartbeat before its last beat on are due a ring again (budget returned); a ring it
// wrote long before, while it was beating, stays spent — so the sweep's work follows the
// instance's last moments, not every todo it ever rang.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { reapDeadInstances } from '../../src/store/instances.js';
import { testDatabase } from '../helpers/db.js';
import { makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('dead_instance_rings');

test('a dead instance gives back the rings of its last moments and keeps the ones it wrote while beating', async () => {
  const e = await makeEndpoint(pool);
  await pool.query(`INSERT INTO instances (id, host, pid, version, last_beat_at)
                    VALUES ('i-gone', 'h', 1, 'v', now() - interval '1 minute')`);
  const rung = async (id: string, at: string) =>
    pool.query(
      `INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, ready_at, ring_attempts, last_ringed_at,
                          last_rung_instance, created_at, updated_at)
       VALUES ($1, $2, 'inbox', 't', $3, now() - interval '2 hours', 2, now() - $4::interval, 'i-gone',
               now() - interval '2 hours', now() - interval '2 hours')`,
      [e.id, id, e.human_id, at],
    );
  await rung('td_old', '1 hour'); // written while the instance beat
  await rung('td_late', '58 seconds'); // after its last beat: maybe never written
  await rung('td_edge', '63 seconds'); // within one heartbeat before the last beat
  const released = await reapDeadInstances(pool, 15_000, 'i-me', 5_000);
  assert.deepEqual(released.instances, ['i-gone']);
  assert.deepEqual(released.queues, [{ endpointId: e.id, queue: 'inbox' }]);
  const rows = await pool.query<{ id: string; ring_attempts: number; last_rung_instance: string | null }>(
    `SELECT id, ring_attempts, last_rung_instance FROM todos WHERE endpoint_id = $1 ORDER BY id`,
    [e.id],
  );
  assert.deepEqual(rows.rows, [
    { id: 'td_edge', ring_attempts: 1, last_rung_instance: null },
    { id: 'td_late', ring_attempts: 1, last_rung_instance: null },
    { id: 'td_old', ring_attempts: 2, last_rung_instance: 'i-gone' },
  ]);
});
