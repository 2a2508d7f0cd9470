// Pins bulk cancel / retry by filter: racing claimers never lose a claim to a cancel that
// did not ask for claimed todos, batches cover more rows than one batch holds, each filter
// narrows, a dry run changes nothing, every run is audited, and bad input names its field.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPool, type Pool } from '../../src/db/pool.js';
import { bulkAction, titlePattern } from '../../src/todos/bulk-actions.js';
import { claimNext } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, barrier, depsOf, makeEndpoint } from '../helpers/fixtures.js';
import { caught, shared, world } from './world.js';

const HUMAN = 'hu_bulk_actor';

/** `n` todos on the endpoint straight in SQL (ids in creation order), in the given state. */
async function insertTodos(
  pool: Pool,
  endpointId: string,
  n: number,
  row: { queue?: string; state?: string; title?: string; kind?: string; source?: string; prefix?: string } = {},
): Promise<void> {
  const state = row.state ?? 'pending';
  await pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, kind, source, state, ready_at, completed_at)
     SELECT $1, 'td_' || $7 || lpad(g::text, 8, '0'), $3, $4 || ' ' || g, $5, $6, $8,
            CASE WHEN $8 = 'pending' THEN now() END, CASE WHEN $8 IN ('done', 'canceled') THEN now() END
       FROM generate_series(1, $2::int) g`,
    [
      endpointId,
      n,
      row.queue ?? 'inbox',
      row.title ?? 'todo',
      row.kind ?? null,
      row.source ?? null,
      row.prefix ?? 'x',
      state,
    ],
  );
}

async function states(pool: Pool, endpointId: string): Promise<Record<string, number>> {
  const res = await pool.query<{ state: string; n: number }>(
    `SELECT state, count(*)::int AS n FROM todos WHERE endpoint_id = $1 GROUP BY state`,
    [endpointId],
  );
  return Object.fromEntries(res.rows.map((r) => [r.state, r.n]));
}

test('a bulk cancel racing 8 claimers cancels no claimed todo, and every todo ends claimed by one or canceled', async () => {
  const { pool, url } = await testDatabase('bulk_race', 4);
  const endpoint = await makeEndpoint(pool);
  await insertTodos(pool, endpoint.id, 400);
  const racers = createPool({ url, max: 9 });
  const claims = new Map<string, string>();
  let result;
  try {
    const clients = await Promise.all(Array.from({ length: 9 }, () => racers.connect()));
    clients.forEach((c) => c.release());
    const wait = barrier(9);
    const deps = depsOf(racers);
    const claimers = Array.from({ length: 8 }, async (_, i) => {
      const agent = agentOf(endpoint, `claimer-${i}`);
      await wait();
      for (;;) {
        const r = await claimNext(deps, agent, {});
        if (!('todo' in r)) return;
        assert.ok(!claims.has(r.todo.id), `${r.todo.id} claimed twice`);
        claims.set(r.todo.id, agent.sessionId);
      }
    });
    const cancel = (async () => {
      await wait();
      return bulkAction(deps, endpoint.id, HUMAN, { action: 'cancel', filter: {} }, 25);
    })();
    [result] = await Promise.all([cancel, ...claimers]);
  } finally {
    await racers.end();
  }
  assert.ok(result);
  const rows = await pool.query<{ id: string; state: string; owner_session_id: string | null; attempts: number }>(
    `SELECT t.id, t.state, t.owner_session_id,
            (SELECT count(*)::int FROM todo_attempts a WHERE a.todo_id = t.id) AS attempts
       FROM todos t WHERE t.endpoint_id = $1`,
    [endpoint.id],
  );
  const claimed = rows.rows.filter((r) => r.state === 'claimed');
  const canceled = rows.rows.filter((r) => r.state === 'canceled');
  assert.equal(claimed.length + canceled.length, 400, JSON.stringify(await states(pool, endpoint.id)));
  assert.equal(claimed.length, claims.size, 'every claim the claimers saw is still a claim');
  for (const r of claimed) assert.equal(r.owner_session_id, claims.get(r.id), `${r.id} is held by its claimer`);
  assert.ok(
    canceled.every((r) => r.attempts === 0 && !claims.has(r.id)),
    'no canceled todo was ever claimed',
  );
  assert.equal(result.changed, canceled.length);
  assert.ok(
    result.matched >= result.changed && result.matched <= 400,
    `matched ${result.matched}: what was still pending when the cancel counted`,
  );
});

test('a bulk cancel asking for state "claimed" cancels claimed todos and closes their attempts', async () => {
  const w = await world('bulk_claimed');
  for (let i = 0; i < 3; i++) await w.create({ title: `c${i}` });
  await claimNext(w.deps, w.a, {});
  await claimNext(w.deps, w.b, {});
  const plain = await bulkAction(w.deps, w.endpointId, HUMAN, { action: 'cancel', filter: {} });
  assert.deepEqual({ matched: plain.matched, changed: plain.changed }, { matched: 1, changed: 1 });
  assert.deepEqual(await states(w.pool, w.endpointId), { claimed: 2, canceled: 1 });
  const asked = await bulkAction(w.deps, w.endpointId, HUMAN, { action: 'cancel', filter: { state: 'claimed' } });
  assert.equal(asked.changed, 2);
  assert.deepEqual(await states(w.pool, w.endpointId), { canceled: 3 });
  const open = await w.pool.query(
    `SELECT outcome FROM todo_attempts WHERE endpoint_id = $1 AND (ended_at IS NULL OR outcome <> 'canceled')`,
    [w.endpointId],
  );
  assert.equal(open.rowCount, 0, 'both attempts closed as canceled');
});

test('a bulk retry makes failed and canceled todos pending with fresh attempts and leaves done ones', async () => {
  const w = await world('bulk_retry');
  await insertTodos(w.pool, w.endpointId, 3, { state: 'failed', prefix: 'f' });
  await insertTodos(w.pool, w.endpointId, 2, { state: 'canceled', prefix: 'c' });
  await insertTodos(w.pool, w.endpointId, 4, { state: 'done', prefix: 'd' });
  await w.pool.query(`UPDATE todos SET attempt = 5, error = 'boom' WHERE endpoint_id = $1 AND state = 'failed'`, [
    w.endpointId,
  ]);
  const result = await bulkAction(w.deps, w.endpointId, HUMAN, { action: 'retry', filter: {} });
  assert.deepEqual(result, { action: 'retry', dry_run: false, matched: 5, changed: 5 });
  assert.deepEqual(await states(w.pool, w.endpointId), { pending: 5, done: 4 });
  const revived = await w.pool.query(
    `SELECT id FROM todos WHERE endpoint_id = $1 AND state = 'pending'
        AND (attempt <> 0 OR error IS NOT NULL OR ready_at IS NULL OR completed_at IS NOT NULL)`,
    [w.endpointId],
  );
  assert.equal(revived.rowCount, 0, 'attempt 0, error cleared, ready now');
  const claim = await claimNext(w.deps, w.a, {});
  assert.ok('todo' in claim, 'a retried todo is claimable');
});

test('a bulk retry skips a todo whose idempotency key a live todo holds, and retries the rest', async () => {
  const w = await world('bulk_retry_key');
  const first = await w.create({ title: 'keyed', idempotency_key: 'k-1' });
  await bulkAction(w.deps, w.endpointId, HUMAN, { action: 'cancel', filter: {} });
  // Past the idempotency window, so the canceled todo no longer holds its key.
  await w.pool.query(`UPDATE todos SET updated_at = now() - interval '25 hours' WHERE endpoint_id = $1 AND id = $2`, [
    w.endpointId,
    first.todo.id,
  ]);
  const live = await w.create({ title: 'keyed again', idempotency_key: 'k-1' });
  assert.notEqual(live.todo.id, first.todo.id);
  await w.create({ title: 'plain' });
  await bulkAction(w.deps, w.endpointId, HUMAN, { action: 'cancel', filter: { q: 'plain' } });
  const result = await bulkAction(w.deps, w.endpointId, HUMAN, { action: 'retry', filter: {} });
  assert.deepEqual({ matched: result.matched, changed: result.changed }, { matched: 2, changed: 1 });
  const row = await w.pool.query<{ state: string }>(`SELECT state FROM todos WHERE id = $1`, [first.todo.id]);
  assert.equal(row.rows[0]?.state, 'canceled', 'the one in conflict is untouched');
});

test('a dry run counts the matches, changes nothing and writes no audit row', async () => {
  const w = await world('bulk_dry');
  await insertTodos(w.pool, w.endpointId, 7);
  const result = await bulkAction(w.deps, w.endpointId, HUMAN, { action: 'cancel', filter: {}, dry_run: true });
  assert.deepEqual(result, { action: 'cancel', dry_run: true, matched: 7, changed: 0 });
  assert.deepEqual(await states(w.pool, w.endpointId), { pending: 7 });
  const audit = await w.pool.query(`SELECT 1 FROM todo_bulk_audit WHERE endpoint_id = $1`, [w.endpointId]);
  assert.equal(audit.rowCount, 0);
});

test('each filter narrows what a bulk action matches', async () => {
  const { pool } = shared;
  const endpoint = await makeEndpoint(pool, { queues: ['inbox', 'other'] });
  const deps = depsOf(pool);
  await insertTodos(pool, endpoint.id, 2, {
    prefix: 'a',
    title: 'Deploy 50% of canary',
    kind: 'deploy',
    source: 'api',
  });
  await insertTodos(pool, endpoint.id, 3, {
    prefix: 'b',
    title: 'deploy 500 hosts',
    kind: 'deploy',
    source: 'webhook',
  });
  await insertTodos(pool, endpoint.id, 4, { prefix: 'c', queue: 'other', title: 'triage', kind: 'triage' });
  await insertTodos(pool, endpoint.id, 5, { prefix: 'd', state: 'failed', title: 'old failure' });
  await pool.query(`UPDATE todos SET created_at = '2020-01-01T00:00:00Z' WHERE endpoint_id = $1 AND id LIKE 'td_d%'`, [
    endpoint.id,
  ]);
  const count = async (filter: Record<string, unknown>) =>
    (await bulkAction(deps, endpoint.id, HUMAN, { action: 'cancel', filter, dry_run: true })).matched;
  assert.equal(await count({}), 14);
  assert.equal(await count({ queue: 'other' }), 4);
  assert.equal(await count({ state: 'failed' }), 5);
  assert.equal(await count({ state: 'pending' }), 9);
  assert.equal(await count({ kind: 'deploy' }), 5);
  assert.equal(await count({ source: 'webhook' }), 3);
  assert.equal(await count({ created_before: '2021-01-01T00:00:00Z' }), 5);
  assert.equal(await count({ created_after: '2021-01-01T00:00:00+02:00' }), 9);
  assert.equal(await count({ q: 'DEPLOY' }), 5, 'q ignores case');
  assert.equal(await count({ q: '50%' }), 2, 'a % in q is a percent sign, not a wildcard');
  assert.equal(await count({ q: 'deploy_5' }), 0, 'an _ in q is an underscore');
  assert.equal(await count({ kind: 'deploy', source: 'api', queue: 'inbox' }), 2, 'filters combine');
  assert.equal(titlePattern('a\\b%c_d'), '%a\\\\b\\%c\\_d%');
});

test('a bulk action over more rows than a batch walks every batch and audits the total', async () => {
  const w = await world('bulk_batches');
  await insertTodos(w.pool, w.endpointId, 1234);
  const result = await bulkAction(
    w.deps,
    w.endpointId,
    HUMAN,
    { action: 'cancel', filter: { queue: 'inbox', q: 'todo' } },
    500,
  );
  assert.deepEqual({ matched: result.matched, changed: result.changed }, { matched: 1234, changed: 1234 });
  assert.deepEqual(await states(w.pool, w.endpointId), { canceled: 1234 });
  const audit = await w.pool.query(
    `SELECT actor_human_id, action, filter, matched, changed, finished_at IS NOT NULL AS finished
       FROM todo_bulk_audit WHERE endpoint_id = $1`,
    [w.endpointId],
  );
  assert.deepEqual(audit.rows, [
    {
      actor_human_id: HUMAN,
      action: 'cancel',
      filter: { queue: 'inbox', q: 'todo' },
      matched: 1234,
      changed: 1234,
      finished: true,
    },
  ]);
  const again = await bulkAction(w.deps, w.endpointId, HUMAN, { action: 'retry', filter: {} }, 7);
  assert.equal(again.changed, 1234, 'a small batch size walks 177 batches');
});

test('bad input is invalid_argument naming the field, before anything is read', async () => {
  const w = await world('bulk_invalid');
  const field = async (input: unknown) =>
    (await caught(bulkAction(w.deps, w.endpointId, HUMAN, input), 'invalid_argument')).details?.field;
  assert.equal(await field({ action: 'delete', filter: {} }), 'action');
  assert.equal(await field({ filter: {} }), 'action');
  assert.equal(await field({ action: 'cancel' }), 'filter');
  assert.equal(await field({ action: 'cancel', filter: { state: 'lost' } }), 'filter.state');
  assert.equal(await field({ action: 'cancel', filter: { state: 'done' } }), 'filter.state');
  assert.equal(await field({ action: 'retry', filter: { state: 'pending' } }), 'filter.state');
  assert.equal(await field({ action: 'cancel', filter: { created_before: 'yesterday' } }), 'filter.created_before');
  assert.equal(
    await field({ action: 'cancel', filter: { created_after: '2026-13-01T00:00:00Z' } }),
    'filter.created_after',
  );
  assert.equal(await field({ action: 'cancel', filter: { queue: 'Not A Queue' } }), 'filter.queue');
  assert.equal(await field({ action: 'cancel', filter: { q: '' } }), 'filter.q');
  assert.equal(await field({ action: 'cancel', filter: {}, dry_run: 'yes' }), 'dry_run');
  assert.equal(await field({ action: 'cancel', filter: { colour: 'red' } }), 'filter.colour');
  assert.equal(await field({ action: 'cancel', filter: {}, everything: true }), 'everything');
});
