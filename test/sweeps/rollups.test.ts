// Pins the queue rollups (docs/design/queue-rollups.md): two instances racing the minute
// sweep write each live queue's row of the minute once, with its depth, work in flight and
// oldest ready todo; racing folds add every creation, completion and failure to the minute
// exactly once; the sample reads at most one todos row per queue, through an index; the
// charts' read places a minute in its slot; retention prunes the minutes past it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { createPool } from '../../src/db/pool.js';
import { chartKey, LAST_HOUR, queueCharts } from '../../src/endpoints/charts.js';
import { pruneRollups, SAMPLE_ROLLUPS_SQL } from '../../src/store/queue-rollups.js';
import { foldTodoCounts, stateCounts } from '../../src/store/todo-counts.js';
import { drainPrune, RETENTION_BOUNDS } from '../../src/sweeps/retention.js';
import { queueRollupSweep } from '../../src/sweeps/rollups.js';
import { SweepRunner, type Sweep } from '../../src/sweeps/runner.js';
import { claimNext, complete, createTodo, fail } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, barrier, depsOf, makeEndpoint } from '../helpers/fixtures.js';

const { pool, url } = await testDatabase('sweeps_rollups');
const silent = pino({ level: 'silent' });

interface Row {
  queue: string;
  minute: Date;
  depth: number;
  in_flight: number;
  created: number;
  completed: number;
  failed: number;
  oldest_ready_at: Date | null;
}

async function rowsOf(endpointId: string): Promise<Row[]> {
  const res = await pool.query<Row>(
    `SELECT queue, minute, depth, in_flight, created, completed, failed, oldest_ready_at
       FROM queue_rollups WHERE endpoint_id = $1 ORDER BY queue, minute`,
    [endpointId],
  );
  return res.rows;
}

async function push(endpointId: string, queue: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    await createTodo(depsOf(pool), { endpointId }, { humanId: 'hu_test' }, { queue, title: `${queue}-${i}` });
  }
}

test('two instances racing the minute sweep write each live queue one row for the minute, with depth, in flight and the oldest ready', async () => {
  const e = await makeEndpoint(pool, { queues: ['inbox', 'builds', 'idle'] });
  await push(e.id, 'inbox', 3);
  await push(e.id, 'builds', 2);
  const agent = agentOf(e);
  const claimed = await claimNext(depsOf(pool), agent, { queue: 'builds' });
  assert.ok('todo' in claimed);
  const oldest = await pool.query<{ ready_at: Date }>(
    `SELECT min(ready_at) AS ready_at FROM todos WHERE endpoint_id = $1 AND queue = 'inbox'`,
    [e.id],
  );

  const pools = [createPool({ url, max: 2 }), createPool({ url, max: 2 })];
  try {
    let runs = 0;
    const runners = ['i-a', 'i-b'].map((id, i) => {
      const inner = queueRollupSweep(pools[i]!);
      const sweep: Sweep = { ...inner, run: async () => ((runs += 1), inner.run()) };
      return { sweep, runner: new SweepRunner({ db: pools[i]!, instanceId: id, log: silent, sweeps: [sweep] }) };
    });
    const won: number[] = [];
    for (let round = 0; round < 5; round++) {
      const go = barrier(2);
      const slots = await Promise.all(
        runners.map(async (r) => {
          await go();
          return r.runner.tick(r.sweep);
        }),
      );
      won.push(...slots.filter((s): s is number => s !== null));
    }
    assert.equal(new Set(won).size, won.length, `a minute was sampled twice: ${won.join(',')}`);
    assert.equal(runs, won.length, 'the sample ran once per minute won');
    assert.ok(won.length >= 1 && won.length <= 2, `five racing rounds span one minute, or two: ${won.join(',')}`);
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }

  const rows = await rowsOf(e.id);
  const last = (queue: string) => rows.filter((r) => r.queue === queue).at(-1);
  assert.ok(
    rows.every((r) => r.queue !== 'idle'),
    'a queue with no live work writes no row',
  );
  const minutes = new Set(rows.map((r) => `${r.queue}@${r.minute.toISOString()}`));
  assert.equal(minutes.size, rows.length, 'one row per queue and minute');
  assert.deepEqual({ depth: last('inbox')?.depth, in_flight: last('inbox')?.in_flight }, { depth: 3, in_flight: 0 });
  assert.deepEqual({ depth: last('builds')?.depth, in_flight: last('builds')?.in_flight }, { depth: 1, in_flight: 1 });
  assert.equal(last('inbox')?.oldest_ready_at?.getTime(), oldest.rows[0]?.ready_at.getTime());
  assert.equal(last('inbox')?.minute.getUTCSeconds(), 0, 'rows are keyed by the minute');
});

test('racing folds add each created, completed and failed todo to its minute exactly once', async () => {
  const e = await makeEndpoint(pool, { queues: ['inbox'] });
  const racers = createPool({ url, max: 8 });
  const deps = depsOf(racers);
  let folding = true;
  const folders = Array.from({ length: 3 }, async () => {
    while (folding) {
      await foldTodoCounts(racers);
      await new Promise((r) => setTimeout(r, 2));
    }
  });
  try {
    const go = barrier(4);
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        const agent = agentOf(e, `w${w}`);
        await go();
        for (let i = 0; i < 10; i++) {
          await createTodo(deps, { endpointId: e.id }, { humanId: 'hu_test' }, { queue: 'inbox', title: `t${w}-${i}` });
          if (i % 2 === 1) continue;
          const claimed = await claimNext(deps, agent, {});
          if (!('todo' in claimed)) continue;
          if (i % 4 === 0) await complete(deps, agent, { id: claimed.todo.id });
          else await fail(deps, agent, { id: claimed.todo.id, error: 'boom' });
        }
      }),
    );
  } finally {
    folding = false;
    await Promise.all(folders);
  }
  await foldTodoCounts(racers);
  await racers.end();
  const truth = await pool.query<{ done: number; failed: number; all: number }>(
    `SELECT count(*) FILTER (WHERE state = 'done')::int AS done, count(*) FILTER (WHERE state = 'failed')::int AS failed,
            count(*)::int AS all FROM todos WHERE endpoint_id = $1`,
    [e.id],
  );
  const rows = await rowsOf(e.id);
  const total = (k: 'created' | 'completed' | 'failed') => rows.reduce((n, r) => n + r[k], 0);
  assert.equal(total('created'), 40);
  assert.equal(total('created'), truth.rows[0]?.all);
  assert.equal(total('completed'), truth.rows[0]?.done);
  assert.equal(total('failed'), truth.rows[0]?.failed);
  assert.ok(total('completed') > 0 && total('failed') > 0, 'the race completed and failed work');

  const charts = await queueCharts({ db: pool }, [{ endpointId: e.id, queue: 'inbox' }], LAST_HOUR, new Date());
  const chart = charts.get(chartKey(e.id, 'inbox'));
  assert.equal(chart?.slots.completed.length, 60, 'an hour by the minute');
  assert.equal(
    chart?.slots.completed.reduce((a, b) => a + b, 0),
    truth.rows[0]?.done,
    'the chart read places every minute in the window',
  );
});

test('the minute sample reads at most one todos row per queue with a backlog, through an index, whatever the backlog', async () => {
  const e = await makeEndpoint(pool, { queues: ['big', 'small'] });
  await pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, state, ready_at, created_at, updated_at)
     SELECT $1, 'td_rollup' || lpad(g::text, 6, '0'), CASE WHEN g % 10 = 0 THEN 'small' ELSE 'big' END, 'backlog',
            $2, 'pending', now() - g * interval '1 second', now() - g * interval '1 second', now()
       FROM generate_series(1, 20000) g`,
    [e.id, e.human_id],
  );
  await pool.query('ANALYZE todos');
  // Every queue of the database with a backlog is sampled (the other tests' too).
  const backlogs = (await stateCounts(pool, null)).filter((c) => c.state === 'pending').length;
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const res = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${SAMPLE_ROLLUPS_SQL}`,
    );
    const plan = res.rows[0]!['QUERY PLAN'][0]!.Plan;
    const onTodos = nodes(plan).filter((n) => n['Relation Name'] === 'todos');
    assert.ok(onTodos.length > 0, 'the sample probes todos for the oldest ready');
    for (const n of onTodos) {
      assert.notEqual(n['Node Type'], 'Seq Scan', JSON.stringify(plan, null, 1));
      const read = (n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1) + (n['Rows Removed by Filter'] ?? 0);
      assert.ok(read <= backlogs, `read ${read} todos rows for ${backlogs} queues: ${JSON.stringify(n)}`);
    }
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  Plans?: PlanNode[];
}

const nodes = (n: PlanNode): PlanNode[] => [n, ...(n.Plans ?? []).flatMap(nodes)];

test('retention prunes the rollup minutes older than SWITCHBOARD_ROLLUP_RETENTION and keeps the younger ones', async () => {
  const e = await makeEndpoint(pool, { queues: ['inbox'] });
  await pool.query(
    `INSERT INTO queue_rollups (endpoint_id, queue, minute, depth)
     SELECT $1, 'inbox', date_trunc('minute', now()) - g * interval '1 minute', 1 FROM generate_series(0, 4319) g`,
    [e.id],
  );
  const pruned = await drainPrune(pool, pruneRollups, 2 * 86_400_000, { ...RETENTION_BOUNDS, batch: 100 });
  const left = await pool.query<{ n: number; oldest: Date }>(
    `SELECT count(*)::int AS n, min(minute) AS oldest FROM queue_rollups WHERE endpoint_id = $1`,
    [e.id],
  );
  assert.ok(pruned >= 1_439 && pruned <= 1_441, `the third day went: ${pruned}`);
  assert.equal(left.rows[0]!.n + pruned, 4_320);
  assert.ok(Date.now() - left.rows[0]!.oldest.getTime() <= 2 * 86_400_000 + 60_000, 'nothing past two days stays');
});
