// Pins claim order (priority first, oldest ready within a priority) under racing
// claimers, that the claim reads it straight off an index on a large table, and the
// jittered, per-todo retry backoff of fail.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPool, type Pool } from '../../src/db/pool.js';
import { jitteredDelayBounds, retryDelaySeconds } from '../../src/domain/backoff.js';
import { nextManySql } from '../../src/store/claims-batch.js';
import { nextSql } from '../../src/store/claims.js';
import { claimNext, createTodo, fail } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, barrier, depsOf, makeEndpoint } from '../helpers/fixtures.js';
import { claimed, dueRetry, lapseLease } from './world.js';

const CLAIMERS = 16;
const ROUNDS = 3;

test('16 racing claimers take todos highest priority first, oldest first within a priority, each once', async () => {
  const { pool, url } = await testDatabase('prio_race');
  const endpoint = await makeEndpoint(pool);
  const priorities = [0, 50, -20, 50, 0, 100, -20, 0];
  const made: Array<{ id: string; priority: number; index: number }> = [];
  for (let i = 0; i < CLAIMERS * ROUNDS; i++) {
    const priority = priorities[i % priorities.length] ?? 0;
    const { todo } = await createTodo(
      depsOf(pool),
      { endpointId: endpoint.id },
      { humanId: endpoint.human_id },
      { queue: 'inbox', title: `t${i}`, priority },
    );
    assert.equal(todo.priority, priority);
    made.push({ id: todo.id, priority, index: i });
  }
  const expected = [...made].sort((a, b) => b.priority - a.priority || a.index - b.index).map((t) => t.id);

  const racers = createPool({ url, max: CLAIMERS });
  try {
    const clients = await Promise.all(Array.from({ length: CLAIMERS }, () => racers.connect()));
    clients.forEach((c) => c.release());
    const taken: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const wait = barrier(CLAIMERS);
      const ids = await Promise.all(
        Array.from({ length: CLAIMERS }, async (_, i) => {
          await wait();
          return claimed(await claimNext(depsOf(racers), agentOf(endpoint, `s${round}-${i}`), {})).id;
        }),
      );
      // Each claim takes the first row nobody holds, so a round takes exactly the next
      // 16 in claim order, whoever got which.
      assert.deepEqual(
        [...ids].sort(),
        expected.slice(round * CLAIMERS, (round + 1) * CLAIMERS).sort(),
        `round ${round}`,
      );
      taken.push(...ids);
    }
    assert.equal(new Set(taken).size, CLAIMERS * ROUNDS, 'every todo claimed once');
    assert.deepEqual(await claimNext(depsOf(racers), agentOf(endpoint, 'late'), {}), { empty: true });
  } finally {
    await racers.end();
  }
});

test('a lapsed claim or a due retry is taken after the ready pending todos, whatever its priority', async () => {
  const { pool } = await testDatabase('prio_rank');
  const endpoint = await makeEndpoint(pool);
  const make = async (title: string, priority: number) =>
    (
      await createTodo(
        depsOf(pool),
        { endpointId: endpoint.id },
        { humanId: endpoint.human_id },
        { queue: 'inbox', title, priority },
      )
    ).todo.id;
  const lapsed = await make('lapsed', 100);
  const retried = await make('retried', 90);
  const worker = agentOf(endpoint, 'first');
  assert.equal(claimed(await claimNext(depsOf(pool), worker, {})).id, lapsed);
  assert.equal(claimed(await claimNext(depsOf(pool), worker, {})).id, retried);
  await fail(depsOf(pool), worker, { id: retried });
  await lapseLease(pool, lapsed);
  await dueRetry(pool, retried);
  const low = await make('low', -100);
  const order: string[] = [];
  for (let i = 0; i < 3; i++) order.push(claimed(await claimNext(depsOf(pool), agentOf(endpoint, `w${i}`), {})).id);
  assert.deepEqual(order, [low, lapsed, retried], 'pending first, then the rest by when each became claimable');
});

/** Backlog rows with priorities spread over the range, all ready, as a bulk insert makes them. */
async function backlog(pool: Pool, endpointId: string, from: number, to: number): Promise<void> {
  await pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, priority, ready_at)
     SELECT $1, 'td_' || lpad(g::text, 26, '0'), CASE WHEN g % 2 = 0 THEN 'inbox' ELSE 'other' END, 'b' || g,
            (g * 37 % 201) - 100, now() - make_interval(secs => g % 1000)
       FROM generate_series($2::int, $3::int) g`,
    [endpointId, from, to],
  );
  await pool.query('VACUUM ANALYZE todos');
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

function nodes(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodes)];
}

let prepares = 0;

/**
 * The claim statement's plan, executed and rolled back: its nodes and the buffers it
 * touched. `batch`: the batched claim for that many callers instead, prepared and planned
 * generically, as the pool's generic share runs it (docs/design/coalescing.md, "Planning").
 */
async function claimPlan(
  pool: Pool,
  endpointId: string,
  queues: string[],
  batch?: number,
): Promise<{ nodes: PlanNode[]; blocks: number }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const match = queues.length === 1 ? 't.queue = ($2::text[])[1]' : 't.queue = ANY($2::text[])';
    const explain = 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)';
    let res: { rows: Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }> };
    if (batch === undefined) {
      res = await client.query(`${explain} ${nextSql(match)}`, [endpointId, queues, 'ms_plan', 300, 25]);
    } else {
      await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
      const name = `many_${(prepares += 1)}`; // PREPARE outlives the rolled back transaction
      await client.query(`PREPARE ${name} AS ${nextManySql(match, batch)}`);
      const each = (v: string) => `ARRAY[${Array.from({ length: batch }, () => v).join(', ')}]`;
      res = await client.query(
        `${explain} EXECUTE ${name}('${endpointId}', ARRAY[${queues.map((q) => `'${q}'`).join(', ')}],
           ${each("'ms_plan'")}, ${each('300')}::float8[], ${each('25')})`,
      );
    }
    await client.query('ROLLBACK');
    const plan = res.rows[0]!['QUERY PLAN'][0]!.Plan;
    const all = nodes(plan);
    const blocks = all.reduce((n, p) => Math.max(n, (p['Shared Hit Blocks'] ?? 0) + (p['Shared Read Blocks'] ?? 0)), 0);
    return { nodes: all, blocks };
  } finally {
    client.release();
  }
}

test('claim_next reads a large backlog in claim order off the ready index, without a sort, at the cost of a small one', async () => {
  const { pool } = await testDatabase('prio_plan');
  const endpoint = await makeEndpoint(pool, { queues: ['inbox', 'other'] });
  await backlog(pool, endpoint.id, 1, 10_000);
  const small = await claimPlan(pool, endpoint.id, ['inbox']);
  assert.ok(small.blocks > 0, 'the plan reports its buffers');
  const smallBatch = await claimPlan(pool, endpoint.id, ['inbox'], 8);
  await backlog(pool, endpoint.id, 10_001, 300_000);
  for (const [queues, batch] of [
    [['inbox'], undefined],
    [['inbox', 'other'], undefined],
    [['inbox'], 8],
    [['inbox', 'other'], 8],
  ] as const) {
    const { nodes: plan, blocks } = await claimPlan(pool, endpoint.id, [...queues], batch);
    const types = plan.map((n) => n['Node Type']);
    // No sort reads the backlog (a sort under a todo's few answers, which PostgreSQL 16+
    // shows for jsonb_agg's ORDER BY, reads todo_asks, not todos).
    const sortsOverTodos = plan.filter(
      (n) => /Sort/.test(n['Node Type']) && nodes(n).some((m) => m['Relation Name'] === 'todos'),
    );
    const what = `${queues.join(',')}${batch ? `, a generic batch of ${batch}` : ''}`;
    assert.deepEqual(sortsOverTodos.length, 0, `no sort over ${what}: ${types.join(', ')}`);
    const index = queues.length === 1 ? 'todos_ready_queue_idx' : 'todos_ready_idx';
    assert.ok(
      plan.some((n) => n['Node Type'] === 'Index Scan' && n['Index Name'] === index),
      `an index scan of ${index}: ${JSON.stringify(plan.map((n) => [n['Node Type'], n['Index Name']]))}`,
    );
    // 30 times the rows, about the same pages: the scan stops at the first unlocked row.
    // (A generic plan of `LIMIT cardinality($3)` read ~6,500 here: a tenth of the backlog.)
    const before = batch ? smallBatch.blocks : small.blocks;
    if (queues.length === 1) assert.ok(blocks <= before + 20, `${what}: ${blocks} buffers at 300k vs ${before} at 10k`);
  }
});

test('a failed attempt waits its scheduled delay within 20 % either way, drawn afresh per failure', async () => {
  const { pool } = await testDatabase('prio_jitter');
  const endpoint = await makeEndpoint(pool);
  const agent = agentOf(endpoint, 'worker');
  const delays: number[] = [];
  for (let i = 0; i < 20; i++) {
    await createTodo(
      depsOf(pool),
      { endpointId: endpoint.id },
      { humanId: endpoint.human_id },
      { queue: 'inbox', title: `j${i}` },
    );
    const todo = claimed(await claimNext(depsOf(pool), agent, {}));
    await fail(depsOf(pool), agent, { id: todo.id, error: 'boom' });
    delays.push(await delayOf(pool, todo.id));
  }
  const { min, max } = jitteredDelayBounds(retryDelaySeconds(1));
  for (const d of delays) assert.ok(d >= min - 0.01 && d <= max + 0.01, `${d} s within [${min}, ${max}]`);
  assert.ok(new Set(delays.map((d) => d.toFixed(3))).size > 10, `jittered: ${delays.join(', ')}`);
});

test("a todo's own retry_backoff sets its delays: its base doubling up to its cap, jittered", async () => {
  const { pool } = await testDatabase('prio_backoff');
  const endpoint = await makeEndpoint(pool);
  const agent = agentOf(endpoint, 'worker');
  const backoff = { baseSeconds: 5, maxSeconds: 12 };
  const { todo } = await createTodo(
    depsOf(pool),
    { endpointId: endpoint.id },
    { humanId: endpoint.human_id },
    { queue: 'inbox', title: 'own backoff', max_attempts: 5, retry_backoff: { base_seconds: 5, max_seconds: 12 } },
  );
  for (let attempt = 1; attempt <= 4; attempt++) {
    claimed(await claimNext(depsOf(pool), agent, {}));
    await fail(depsOf(pool), agent, { id: todo.id });
    const { min, max } = jitteredDelayBounds(retryDelaySeconds(attempt, backoff));
    const d = await delayOf(pool, todo.id);
    assert.ok(d >= min - 0.01 && d <= max + 0.01, `attempt ${attempt}: ${d} s within [${min}, ${max}]`);
    await dueRetry(pool, todo.id);
  }
});

/** Seconds from the failure to its retry (both stamped by the fail statement). */
async function delayOf(pool: Pool, id: string): Promise<number> {
  const res = await pool.query<{ s: number }>(
    `SELECT extract(epoch FROM next_retry_at - updated_at)::float8 AS s FROM todos WHERE id = $1 AND next_retry_at = ready_at`,
    [id],
  );
  assert.equal(res.rowCount, 1, 'next_retry_at and ready_at agree');
  return res.rows[0]!.s;
}
