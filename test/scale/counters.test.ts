// Pins the maintained todo counters (store/todo-counts.ts): after create, claim, complete,
// fail, release, reap, retry, cancel, revoke, retention and deletion raced for real across
// many connections — with the fold running alongside — they equal count(*) per
// (endpoint, queue, state), and a rolled-back change leaves them untouched.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPool, type Pool } from '../../src/db/pool.js';
import { AppError } from '../../src/domain/errors.js';
import { revokeEndpoint } from '../../src/endpoints/manage.js';
import { foldTodoCounts, stateCounts } from '../../src/store/todo-counts.js';
import { pruneTerminal, reapExpired, requeueDueRetries } from '../../src/store/todo-sweeps.js';
import { cancel, claimNext, complete, createTodo, fail, release, retryNow } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, barrier, depsOf, makeEndpoint } from '../helpers/fixtures.js';

const { pool, url } = await testDatabase('scale_counters');

/** Losing a race (another worker cancelled or took the todo) is an answer, not a failure. */
async function raced(step: Promise<unknown>): Promise<void> {
  await step.catch((err: unknown) => {
    if (!(err instanceof AppError) || !['conflict', 'not_found'].includes(err.code)) throw err;
  });
}

async function assertCountersExact(db: Pool, label: string): Promise<void> {
  const [counts, rows] = await Promise.all([
    stateCounts(db, null),
    db.query<{ endpoint_id: string; queue: string; state: string; n: number }>(
      `SELECT t.endpoint_id, t.queue, t.state, count(*)::int AS n FROM todos t
        WHERE NOT t.synthetic GROUP BY 1, 2, 3`,
    ),
  ]);
  const key = (e: string, q: string, s: string, n: number) => `${e}/${q}/${s}=${n}`;
  assert.deepEqual(
    counts.map((c) => key(c.endpoint_id, c.queue, c.state, c.count)).sort(),
    rows.rows.map((r) => key(r.endpoint_id, r.queue, r.state, r.n)).sort(),
    `counters after ${label}`,
  );
}

test('counters equal count(*) after every kind of change raced across 16 connections with the fold running', async () => {
  const a = await makeEndpoint(pool, { queues: ['inbox', 'other'] });
  const b = await makeEndpoint(pool, { queues: ['inbox'] });
  const racers = createPool({ url, max: 16 });
  const deps = depsOf(racers, 5);
  let folding = true;
  const folder = (async () => {
    while (folding) {
      await foldTodoCounts(racers);
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  try {
    const wait = barrier(16);
    await Promise.all(
      Array.from({ length: 16 }, async (_, w) => {
        const endpoint = w % 4 === 0 ? b : a;
        const agent = agentOf(endpoint, `s${w}`);
        await wait();
        for (let i = 0; i < 40; i++) {
          const queue = endpoint === a && i % 3 === 0 ? 'other' : 'inbox';
          const { todo } = await createTodo(
            deps,
            { endpointId: endpoint.id },
            { humanId: 'hu_test' },
            { queue, title: `w${w}-${i}`, max_attempts: 2 },
          );
          if (i % 7 === 0) await raced(cancel(deps, endpoint.id, todo.id));
          const claimed = await claimNext(deps, agent, {});
          if (!('todo' in claimed)) continue;
          const id = claimed.todo.id;
          const step = (w + i) % 5;
          if (step === 0) await raced(complete(deps, agent, { id, result: { ok: true } }));
          else if (step === 1) await raced(fail(deps, agent, { id, error: 'boom' }));
          else if (step === 2) await raced(release(deps, agent, { id }));
          else if (step === 3) await racers.query(`UPDATE todos SET lease_expires_at = now() WHERE id = $1`, [id]);
          if (i % 9 === 0) await reapExpired(racers, 50);
          if (i % 11 === 0) {
            await racers.query(`UPDATE todos SET next_retry_at = now() WHERE state = 'failed' AND id = $1`, [id]);
            await requeueDueRetries(racers, 50);
          }
          if (step === 1 && i % 2 === 0) await raced(retryNow(deps, endpoint.id, id));
        }
      }),
    );
    await assertCountersExact(racers, 'the race');

    // Retention deletes in batches, racing new completions; then a revoke dead-letters b's live work.
    await racers.query(`UPDATE todos SET updated_at = now() - interval '40 days'
                         WHERE state IN ('done', 'canceled') OR (state = 'failed' AND next_retry_at IS NULL)`);
    const go = barrier(3);
    await Promise.all([
      (async () => {
        await go();
        while ((await pruneTerminal(racers, 30 * 86_400, 7)) > 0);
      })(),
      (async () => {
        await go();
        await revokeEndpoint({ db: racers, publicUrl: 'http://x' }, b.human_id, b.id, new Date());
      })(),
      (async () => {
        await go();
        const agent = agentOf(a, 'late');
        for (let i = 0; i < 20; i++) {
          const r = await claimNext(deps, agent, {});
          if ('todo' in r) await raced(complete(deps, agent, { id: r.todo.id }));
        }
      })(),
    ]);
    await assertCountersExact(racers, 'retention and revoke');
  } finally {
    folding = false;
    await folder;
    await racers.end();
  }
  await foldTodoCounts(pool);
  await assertCountersExact(pool, 'the last fold');
  const deltas = await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM todo_count_deltas');
  assert.equal(deltas.rows[0]?.n, 0, 'a fold leaves no delta behind');
});

test('a rolled-back state change leaves the counters as they were; deleting an endpoint removes its counts', async () => {
  const e = await makeEndpoint(pool);
  await createTodo(depsOf(pool), { endpointId: e.id }, { humanId: 'hu_test' }, { queue: 'inbox', title: 'x' });
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query(`UPDATE todos SET state = 'canceled' WHERE endpoint_id = $1`, [e.id]);
    await client.query('ROLLBACK');
  } finally {
    client.release();
  }
  assert.deepEqual(
    (await stateCounts(pool, [e.id])).map((c) => `${c.state}=${c.count}`),
    ['pending=1'],
  );
  await foldTodoCounts(pool);
  await pool.query('DELETE FROM endpoints WHERE id = $1', [e.id]);
  const left = await pool.query<{ n: number }>(
    `SELECT (SELECT count(*) FROM todo_counts WHERE endpoint_id = $1) + (SELECT count(*) FROM todo_count_deltas
      WHERE endpoint_id = $1) AS n`,
    [e.id],
  );
  assert.equal(left.rows[0]?.n, 0);
  await assertCountersExact(pool, 'an endpoint deleted');
});
