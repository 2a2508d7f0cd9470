// Pins claim_next under real concurrency: distinct todos, one open attempt each, and
// every todo completed exactly once across two pools (two instances) of workers.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPool, type Pool } from '../../src/db/pool.js';
import { coalescing } from '../../src/todos/coalesce.js';
import { claimNext, complete, createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, barrier, depsOf, makeEndpoint } from '../helpers/fixtures.js';

// Each race runs twice: each call its own statement, and coalesced (docs/design/coalescing.md).
for (const coalesced of [false, true]) {
  const mode = coalesced ? ' (coalesced)' : '';
  const depsFor = (p: Pool) => ({ ...depsOf(p), coalesce: coalesced ? coalescing(p, { maxBatch: 32 }) : null });

  test(`12 workers racing claim_next${mode} over 12 todos get 12 distinct todos with one open attempt each`, async () => {
    const { pool, url } = await testDatabase(`claim_race_12${coalesced ? '_c' : ''}`);
    const endpoint = await makeEndpoint(pool);
    for (let i = 0; i < 12; i++) {
      await createTodo(
        depsOf(pool),
        { endpointId: endpoint.id },
        { humanId: 'hu_test' },
        { queue: 'inbox', title: `t${i}` },
      );
    }
    // Twelve connections, each warmed up, then released together by a barrier.
    const racers = createPool({ url, max: 12 });
    try {
      const clients = await Promise.all(Array.from({ length: 12 }, () => racers.connect()));
      clients.forEach((c) => c.release());
      const wait = barrier(12);
      const deps = depsFor(racers);
      const results = await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          await wait();
          return claimNext(deps, agentOf(endpoint, `s${i}`), {});
        }),
      );
      const ids = results.map((r) => ('todo' in r ? r.todo.id : 'empty'));
      assert.equal(new Set(ids).size, 12, `distinct claims: ${ids.join(',')}`);
      assert.ok(!ids.includes('empty'));
    } finally {
      await racers.end();
    }
    const open = await pool.query<{ todo_id: string; n: number }>(
      `SELECT todo_id, count(*)::int AS n FROM todo_attempts WHERE ended_at IS NULL GROUP BY todo_id`,
    );
    assert.equal(open.rowCount, 12);
    assert.ok(open.rows.every((r) => r.n === 1));
  });

  test(`two pools of 25 workers${mode} over 2,000 todos complete every todo exactly once and lose none`, async () => {
    const { pool, url } = await testDatabase(`claim_race_2k${coalesced ? '_c' : ''}`, 4);
    const endpoint = await makeEndpoint(pool, { queues: ['inbox', 'other'] });
    await pool.query(
      `INSERT INTO todos (endpoint_id, id, queue, title, ready_at)
       SELECT $1, 'td_' || lpad(g::text, 26, '0'), CASE WHEN g % 2 = 0 THEN 'inbox' ELSE 'other' END, 'bulk ' || g, now()
         FROM generate_series(1, 2000) g`,
      [endpoint.id],
    );
    const pools = [createPool({ url, max: 25 }), createPool({ url, max: 25 })];
    const completions = new Map<string, number>();
    const wait = barrier(50);
    try {
      await Promise.all(
        pools.flatMap((p, instance) =>
          Array.from({ length: 25 }, async (_, w) => {
            const deps = depsFor(p);
            const agent = agentOf(endpoint, `i${instance}-w${w}`);
            await wait();
            for (;;) {
              const r = await claimNext(deps, agent, {});
              if (!('todo' in r)) return;
              await complete(deps, agent, { id: r.todo.id, result: { by: agent.sessionId } });
              completions.set(r.todo.id, (completions.get(r.todo.id) ?? 0) + 1);
            }
          }),
        ),
      );
    } finally {
      await Promise.all(pools.map((p) => p.end()));
    }
    assert.equal(completions.size, 2000);
    assert.ok([...completions.values()].every((n) => n === 1));
    const states = await pool.query<{ state: string; n: number }>(
      `SELECT state, count(*)::int AS n FROM todos GROUP BY state`,
    );
    assert.deepEqual(states.rows, [{ state: 'done', n: 2000 }]);
    const attempts = await pool.query<{ n: number; open: number }>(
      `SELECT count(*)::int AS n, count(*) FILTER (WHERE ended_at IS NULL)::int AS open FROM todo_attempts`,
    );
    assert.deepEqual(attempts.rows[0], { n: 2000, open: 0 });
  });
}
