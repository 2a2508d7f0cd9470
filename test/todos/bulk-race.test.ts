// Pins the bulk create against concurrent creates of the same keys: a key taken by another
// transaction while the bulk statement runs is answered with that todo (the second round),
// and racing bulk creates with overlapping keys make each key's todo exactly once.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createTodo } from '../../src/todos/index.js';
import { createTodos } from '../../src/todos/create-bulk.js';
import { testDatabase } from '../helpers/db.js';
import { barrier, depsOf, makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('bulk_race');
const deps = depsOf(pool);

const target = (endpointId: string) => ({ endpointId, queues: ['inbox'], queuesLabel: 'inbox' });
const items = (keys: string[]) => ({ todos: keys.map((k) => ({ queue: 'inbox', title: k, idempotency_key: k })) });

test('a key another transaction takes while the bulk insert waits on it answers that todo', async () => {
  const endpoint = await makeEndpoint(pool);
  const sender = { humanId: endpoint.human_id };
  const other = await pool.connect();
  try {
    await other.query('BEGIN');
    const rival = await createTodo({ ...deps, db: other }, { endpointId: endpoint.id }, sender, {
      queue: 'inbox',
      title: 'rival',
      idempotency_key: 'contested',
    });
    // The bulk statement saw no holder (the rival is uncommitted) and now waits on the
    // unique index for the rival's transaction.
    const bulk = createTodos(deps, target(endpoint.id), sender, items(['free-1', 'contested', 'free-2']));
    await new Promise((resolve) => setTimeout(resolve, 200));
    await other.query('COMMIT');
    const result = await bulk;
    assert.deepEqual([result.created, result.duplicates], [2, 1]);
    assert.equal(result.todos[1]?.id, rival.todo.id);
    assert.equal(result.todos[1]?.title, 'rival');
  } finally {
    other.release();
  }
  const count = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [
    endpoint.id,
  ]);
  assert.equal(count.rows[0]?.n, 3);
});

test('eight racing bulk creates with overlapping keys make each key’s todo once', async () => {
  const endpoint = await makeEndpoint(pool);
  const sender = { humanId: endpoint.human_id };
  const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);
  const wait = barrier(8);
  const results = await Promise.all(
    Array.from({ length: 8 }, async (_, racer) => {
      // Each racer sends the keys in its own order, so the rows conflict in both directions.
      const mine = racer % 2 === 0 ? keys : [...keys].reverse();
      await wait();
      return createTodos(deps, target(endpoint.id), sender, items(mine));
    }),
  );
  assert.equal(
    results.reduce((sum, r) => sum + r.created, 0),
    keys.length,
  );
  const ids = new Map<string, string>();
  for (const r of results) {
    for (const todo of r.todos) {
      const key = todo.idempotency_key ?? '';
      assert.equal(ids.get(key) ?? todo.id, todo.id, `every racer answers one todo for ${key}`);
      ids.set(key, todo.id);
    }
  }
  const count = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [
    endpoint.id,
  ]);
  assert.equal(count.rows[0]?.n, keys.length);
});
