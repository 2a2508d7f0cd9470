// Pins that a todo never stays live on a revoked endpoint (docs/design/todos.md, "Ending a
// session, revoking an endpoint"): a create whose transaction is open when the revoke
// starts is waited for and dead-lettered; a create that starts while the revoke's
// transaction is open waits for it and is refused as conflict, single or bulk; and many
// creates racing one revoke leave nothing live.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAppError } from '../../src/domain/errors.js';
import { revokeEndpoint } from '../../src/store/endpoints.js';
import { createTodos } from '../../src/todos/create-bulk.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { barrier, depsOf, makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('revoke_race', 24);
const deps = depsOf(pool);

/** Todos of the endpoint that are still work: pending, claimed, or failed with a retry due. */
async function liveTodos(endpointId: string): Promise<number> {
  const res = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1
        AND (state IN ('pending', 'claimed') OR (state = 'failed' AND next_retry_at IS NOT NULL))`,
    [endpointId],
  );
  return res.rows[0]?.n ?? -1;
}

const isConflict = (err: unknown) => isAppError(err) && err.code === 'conflict' && /revoked/.test(err.message);

test('a create still open when the revoke starts is waited for and dead-lettered', async () => {
  const endpoint = await makeEndpoint(pool);
  const other = await pool.connect();
  try {
    await other.query('BEGIN');
    const { todo } = await createTodo(
      { ...deps, db: other },
      { endpointId: endpoint.id },
      { humanId: endpoint.human_id },
      {
        queue: 'inbox',
        title: 'in flight',
      },
    );
    const revoking = revokeEndpoint(pool, endpoint.id);
    await new Promise((r) => setTimeout(r, 200));
    await other.query('COMMIT');
    const revoked = await revoking;
    assert.equal(revoked?.dead_lettered, 1, 'the revoke saw the create it waited for');
    const row = await pool.query('SELECT state, error FROM todos WHERE id = $1', [todo.id]);
    assert.deepEqual(row.rows[0], { state: 'failed', error: 'endpoint_revoked' });
  } finally {
    other.release();
  }
});

for (const shape of ['single', 'bulk'] as const) {
  test(`a ${shape} create that starts while the revoke is open waits for it and is refused as conflict`, async () => {
    const endpoint = await makeEndpoint(pool);
    const sender = { humanId: endpoint.human_id };
    const other = await pool.connect();
    try {
      await other.query('BEGIN');
      await revokeEndpoint(other, endpoint.id);
      const creating =
        shape === 'single'
          ? createTodo(deps, { endpointId: endpoint.id }, sender, { queue: 'inbox', title: 'late' })
          : createTodos(deps, { endpointId: endpoint.id, queues: ['inbox'], queuesLabel: 'inbox' }, sender, {
              todos: [
                { queue: 'inbox', title: 'late 1' },
                { queue: 'inbox', title: 'late 2' },
              ],
            });
      await new Promise((r) => setTimeout(r, 200));
      await other.query('COMMIT');
      await assert.rejects(creating, isConflict);
      const rows = await pool.query('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [endpoint.id]);
      assert.equal(rows.rows[0].n, 0, 'nothing was written');
    } finally {
      other.release();
    }
  });
}

test('sixteen creates racing one revoke leave no live todo, ten rounds', async () => {
  for (let round = 0; round < 10; round += 1) {
    const endpoint = await makeEndpoint(pool);
    const wait = barrier(17);
    const creates = Array.from({ length: 16 }, async (_, i) => {
      await wait();
      try {
        await createTodo(
          deps,
          { endpointId: endpoint.id },
          { humanId: endpoint.human_id },
          {
            queue: 'inbox',
            title: `racer ${i}`,
          },
        );
        return 'created';
      } catch (err) {
        if (isConflict(err)) return 'refused';
        throw err;
      }
    });
    const revoke = (async () => {
      await wait();
      await new Promise((r) => setImmediate(r));
      return revokeEndpoint(pool, endpoint.id);
    })();
    const outcomes = await Promise.all(creates);
    const revoked = await revoke;
    assert.equal(await liveTodos(endpoint.id), 0, `round ${round}: ${JSON.stringify(outcomes)}`);
    assert.equal(
      revoked?.dead_lettered,
      outcomes.filter((o) => o === 'created').length,
      `round ${round}: every create that succeeded was dead-lettered by the revoke`,
    );
  }
});
