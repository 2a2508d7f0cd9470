// A backlog pushed moments ago sits in a table whose statistics have not caught up
// (autovacuum analyzes it later), and a plan chosen on those statistics must still read
// what the work needs, not the backlog (docs/design/scale.md, "A pushed backlog"). Here
// todos and doorbell_rings are never analyzed: 100,000 pending todos pushed two minutes
// ago, no hook has decided any, and each has an open ring nobody answered. With no hook the
// hook sweep has nothing to look at; with one it must name the queue after one probe of the
// undecided-transition index. The unheard sweep must mark a batch of rings at a few buffers
// each, and the board's lanes read a page. Whatever the planner guesses, none of them may
// read the backlog.

import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { Queryable } from '../../src/db/pool.js';
import { laneCards } from '../../src/store/board-lanes.js';
import { markUnheardRings } from '../../src/store/doorbell-rings.js';
import { queuesWithUndecided } from '../../src/store/notify-hooks.js';
import { testDatabase, type TestDatabase } from '../helpers/db.js';
import { makeEndpoint } from '../helpers/fixtures.js';

const PENDING = 100_000;

const db: TestDatabase = await testDatabase('scale_stale_stats');
let endpointId = '';

interface PlanNode {
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Join Filter'?: number;
  Plans?: PlanNode[];
}

/** Rows the plan read and threw away, over all loops: what it read beyond what it returned. */
function discarded(node: PlanNode): number {
  const here =
    ((node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Join Filter'] ?? 0)) * (node['Actual Loops'] ?? 1);
  return here + (node.Plans ?? []).reduce((sum, n) => sum + discarded(n), 0);
}

before(async () => {
  await db.pool.query('ALTER TABLE todos SET (autovacuum_enabled = false)');
  await db.pool.query('ALTER TABLE doorbell_rings SET (autovacuum_enabled = false)');
  const e = await makeEndpoint(db.pool, { queues: ['inbox'] });
  endpointId = e.id;
  await db.pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, created_by_human_id, state, ready_at, created_at, updated_at)
     SELECT $1, 'td_' || lpad(g::text, 8, '0'), 'inbox', 'pushed', $2, 'pending', now() - interval '2 minutes',
            now() - interval '2 minutes', now() - interval '2 minutes'
       FROM generate_series(1, $3::int) g`,
    [endpointId, e.human_id, PENDING],
  );
  // Each was rung once, 20 minutes ago, and nobody answered: every ring is open and due for
  // the unheard sweep.
  await db.pool.query(
    `INSERT INTO doorbell_rings (endpoint_id, id, session_id, todo_id, kind, queue, sent_at)
     SELECT endpoint_id, 'rg_' || id, 'ms_gone', id, 'todo', queue, now() - interval '20 minutes' FROM todos`,
  );
});

interface Measured {
  buffers: number;
  discarded: number;
  rows: number;
  plan: string;
}

/**
 * The one statement fn sends, run under EXPLAIN (ANALYZE, BUFFERS) in a transaction that is
 * rolled back: the buffers it touched, the rows it read and discarded, the rows it returned. The statistics are checked
 * to be still missing, or the test would prove nothing.
 */
async function measure(fn: (q: Queryable) => Promise<unknown>): Promise<Measured> {
  const sent: Array<{ text: string; values: unknown[] }> = [];
  const recorder = {
    query: (text: string, values: unknown[]) => {
      sent.push({ text, values });
      return Promise.resolve({ rows: [], rowCount: 0 });
    },
  } as unknown as Queryable;
  await fn(recorder);
  assert.equal(sent.length, 1);
  const { text, values } = sent[0]!;
  const analyzed = await db.pool.query<{ relname: string }>(
    `SELECT relname FROM pg_stat_user_tables
      WHERE relname IN ('todos', 'doorbell_rings') AND coalesce(last_analyze, last_autoanalyze) IS NOT NULL`,
  );
  assert.deepEqual(analyzed.rows, [], 'a table was analyzed: the test no longer shows stale statistics');
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN');
    const res = await client.query<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${text}`,
      values,
    );
    const top = res.rows[0]!['QUERY PLAN'][0]!.Plan;
    const shown = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${text}`, values);
    return {
      buffers: (top['Shared Hit Blocks'] ?? 0) + (top['Shared Read Blocks'] ?? 0),
      discarded: discarded(top),
      rows: top['Actual Rows'] ?? 0,
      plan: `${text}\n\n${shown.rows.map((r) => r['QUERY PLAN']).join('\n')}`,
    };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}

const hookSweep = (q: Queryable) => queuesWithUndecided(q, { limit: 100, minAgeSeconds: 30, maxAgeSeconds: 3600 });

test('with no hook anywhere, the hook sweep reads none of the backlog', async () => {
  const m = await measure(hookSweep);
  assert.equal(m.rows, 0);
  assert.ok(m.buffers < 100, `the hook sweep touched ${m.buffers} buffers beside ${PENDING} pending todos:\n${m.plan}`);
});

test('with a hook, the hook sweep names the queue after one probe of the undecided index', async () => {
  await db.pool.query(`INSERT INTO notify_hooks (endpoint_id, id, url, secret) VALUES ($1, 'nh_1', 'https://x', 's')`, [
    endpointId,
  ]);
  try {
    const m = await measure(hookSweep);
    assert.equal(m.rows, 1);
    assert.ok(
      m.buffers < 100,
      `the hook sweep touched ${m.buffers} buffers beside ${PENDING} pending todos:\n${m.plan}`,
    );
  } finally {
    await db.pool.query(`DELETE FROM notify_hooks WHERE id = 'nh_1'`);
  }
});

test('the unheard sweep marks a batch of open rings through their keys, not once per ring over all of them', async () => {
  const batch = 100;
  const m = await measure((q) => markUnheardRings(q, { windowSeconds: 900, limit: batch }));
  assert.equal(m.rows, batch);
  assert.ok(
    m.discarded < batch,
    `the unheard sweep read and discarded ${m.discarded} rows to mark ${batch} of ${PENDING} open rings:\n${m.plan}`,
  );
});

test("the board's lanes read a page of the pushed backlog, in claim order, without sorting all of it", async () => {
  const m = await measure((q) => laneCards(q, [{ endpointId, queue: 'inbox' }], 20));
  assert.equal(m.rows, 20);
  assert.ok(m.buffers < 200, `the lanes touched ${m.buffers} buffers beside ${PENDING} pending todos:\n${m.plan}`);
  // Claim order: the one todo with a priority comes first, as claim_next would take it.
  await db.pool.query(`UPDATE todos SET priority = 5 WHERE endpoint_id = $1 AND id = 'td_00050000'`, [endpointId]);
  const cards = await laneCards(db.pool, [{ endpointId, queue: 'inbox' }], 20);
  assert.equal(cards.filter((c) => c.lane === 'pending').length, 20);
  assert.equal(cards[0]?.id, 'td_00050000');
});
