// The server's pool sends the named statements marked generic run on it to a share of its
// connections that plan them generically (docs/design/coalescing.md, "Planning"); the rest,
// other named statements and every statement of a transaction included, keep PostgreSQL's
// own choice. Also: a statement text put together at run time is named by its digest and
// marked (src/db/prepared.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { namedShareOf, poolCounts } from '../../src/db/generic-share.js';
import { createPool, withTx } from '../../src/db/pool.js';
import { isPlannedGeneric, planGeneric, prepared } from '../../src/db/prepared.js';
import { emptyDatabase } from '../helpers/db.js';

const MODE = `SELECT current_setting('plan_cache_mode') AS mode, pg_backend_pid() AS pid`;

test('marked statements run on the generic share; unmarked, unnamed ones and transactions on the rest', async () => {
  const url = await emptyDatabase('named_plans');
  const pool = createPool({ url, max: 3, namedShare: 1 });
  try {
    const marked = await pool.query<{ mode: string; pid: number }>(
      planGeneric({ name: 'probe_mode', text: MODE, values: [] }),
    );
    const named = await pool.query<{ mode: string; pid: number }>({ name: 'probe_named', text: MODE, values: [] });
    const unnamed = await pool.query<{ mode: string; pid: number }>(MODE);
    assert.equal(marked.rows[0]?.mode, 'force_generic_plan');
    assert.equal(named.rows[0]?.mode, 'auto', 'a name alone keeps the statement on the rest');
    assert.equal(unnamed.rows[0]?.mode, 'auto');
    assert.notEqual(marked.rows[0]?.pid, unnamed.rows[0]?.pid, 'two connections');
    const inTx = await withTx(pool, (tx) =>
      tx.query<{ mode: string }>(planGeneric({ name: 'probe_mode_tx', text: MODE, values: [] })),
    );
    assert.equal(inTx.rows[0]?.mode, 'auto', 'a transaction keeps its own connection');

    // A named statement with a parameter is planned once, generically, from its first run.
    for (let i = 0; i < 3; i++) {
      await pool.query(planGeneric({ name: 'probe_param', text: 'SELECT $1::int + 1 AS n', values: [i] }));
    }
    const plans = await pool.query<{ generic_plans: number; custom_plans: number }>(
      planGeneric({
        name: 'probe_plans',
        text: `SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = $1`,
        values: ['probe_param'],
      }),
    );
    // The share is one connection: the statement and this look at it ran on the same one.
    assert.deepEqual(plans.rows[0], { generic_plans: 3, custom_plans: 0 }, 'planned generically, from the first run');

    const counts = poolCounts(pool);
    assert.ok(counts.total >= 2 && counts.total <= 3, `both shares counted: ${JSON.stringify(counts)}`);
  } finally {
    await pool.end();
  }
  assert.equal(poolCounts(pool).total, 0, 'ending the pool ends both shares');
});

test('one pool when the share would leave nothing, and a share of at least one', async () => {
  const url = await emptyDatabase('named_plans_one');
  const pool = createPool({ url, max: 2, namedShare: 2 });
  try {
    const marked = await pool.query<{ mode: string }>(planGeneric({ name: 'probe_mode', text: MODE, values: [] }));
    assert.equal(marked.rows[0]?.mode, 'auto');
  } finally {
    await pool.end();
  }
  assert.equal(namedShareOf(2), 1);
  assert.equal(namedShareOf(10), 5);
  assert.equal(namedShareOf(501), 250);
});

test('a built text is named by its digest and marked: equal texts share a name, different ones do not', () => {
  const a = prepared('SELECT 1 WHERE $1', [true]);
  const b = prepared(`SELECT ${1} WHERE $1`, [false]);
  const c = prepared('SELECT 2 WHERE $1', [true]);
  assert.ok(a.name?.startsWith('sb_'));
  assert.equal(a.name, b.name);
  assert.notEqual(a.name, c.name);
  assert.deepEqual(b.values, [false]);
  assert.ok(isPlannedGeneric(a) && isPlannedGeneric(b));
  assert.ok(!isPlannedGeneric({ name: 'x', text: 'SELECT 1', values: [] }), 'a config is marked only by planGeneric');
  assert.ok(!isPlannedGeneric(planGeneric({ text: 'SELECT 1', values: [] })), 'an unnamed one is never routed');
});
