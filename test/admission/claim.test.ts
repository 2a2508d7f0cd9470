// Pins the claim with admission (docs/design/admission.md) through the todo use cases on
// real PostgreSQL: charges per committed claim (retries and takeovers too, refusals
// never), deferred answers with reasons and eligible times, headroom, pause, fail-closed
// zones, claim_next skipping exhausted queues, and queues without a policy left untouched.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clearPolicy } from '../../src/budgets/service.js';
import { Metrics } from '../../src/metrics/index.js';
import { claim, claimNext, complete, fail, getTodo, listTodos, release } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { dueRetry, lapseLease } from '../todos/world.js';
import { attemptRows, budgeted, claimedTodo, DAY_UTC, rejects, windowUsed } from './fixtures.js';

const { pool } = await testDatabase('admission_claim');

test('a queue without a policy claims exactly as before, with no admission field', async () => {
  const w = await budgeted(pool);
  await w.push();
  const result = await claimNext(w.deps, w.agent, {});
  assert.ok('todo' in result);
  assert.equal('admission' in result, false);
  assert.deepEqual(await claimNext(w.deps, w.agent, {}), { empty: true });
  const count = await pool.query(`SELECT count(*)::int AS n FROM admission_windows`);
  assert.equal(count.rows[0].n, 0);
});

test('a claim on a queue without a policy takes no policy lock, and a budgeted one locks its policy row', async () => {
  const w = await budgeted(pool, ['plain', 'metered']);
  await w.budget('metered', { max_in_flight: 5 });
  await w.push('plain');
  await w.push('metered');
  const locksOf = async (queue: string) => {
    const tx = await pool.connect();
    try {
      await tx.query('BEGIN');
      claimedTodo(await claimNext({ db: tx, defaultLeaseSeconds: 300 }, w.agent, { queue }));
      const locks = await tx.query<{ mode: string }>(
        `SELECT l.mode FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
          WHERE l.pid = pg_backend_pid() AND c.relname = 'admission_policies'`,
      );
      return locks.rows.map((r) => r.mode).sort();
    } finally {
      await tx.query('ROLLBACK');
      tx.release();
    }
  };
  assert.deepEqual(await locksOf('plain'), ['AccessShareLock'], 'the probe reads the index; no row lock');
  assert.ok((await locksOf('metered')).includes('RowShareLock'), 'the admit statement locks the policy row');
});

test('each committed claim spends one unit and answers its headroom', async () => {
  const w = await budgeted(pool);
  await w.budget('inbox', { max_in_flight: 5, max_claims_per_window: 3, window: DAY_UTC });
  await w.push();
  await w.push();
  const first = await claimNext(w.deps, w.agent, {});
  assert.ok('admission' in first && first.admission);
  assert.deepEqual(
    { ...first.admission, window_resets_at: typeof first.admission.window_resets_at },
    { max_in_flight: 5, in_flight: 1, max_claims_per_window: 3, used: 1, remaining: 2, window_resets_at: 'string' },
  );
  const second = await claimNext(w.deps, w.other, {});
  assert.ok('admission' in second && second.admission);
  assert.equal(second.admission.used, 2);
  assert.equal(second.admission.in_flight, 2);
  assert.equal(await windowUsed(pool, w.endpointId, 'inbox'), 2);
});

test('an exhausted window defers claim_next with the exact reopening and charges nothing', async () => {
  const w = await budgeted(pool);
  await w.budget('inbox', { max_in_flight: null, max_claims_per_window: 1, window: DAY_UTC });
  const a = await w.push();
  const b = await w.push();
  const first = claimedTodo(await claimNext(w.deps, w.agent, {}));
  await complete(w.deps, w.agent, { id: first.id });
  const refused = await claimNext(w.deps, w.agent, {});
  assert.ok('empty' in refused && refused.deferred);
  const tomorrow = new Date(
    Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1),
  );
  assert.deepEqual(refused.deferred, [
    { queue: 'inbox', reason: 'window_exhausted', pending: 1, next_eligible_at: tomorrow.toISOString(), exact: true },
  ]);
  const left = [a.id, b.id].find((id) => id !== first.id) ?? '';
  const err = await rejects(claim(w.deps, w.agent, { id: left }), 'deferred');
  assert.equal(err.details?.next_eligible_at, tomorrow.toISOString());
  assert.equal(err.details?.reason, 'window_exhausted');
  assert.equal(await windowUsed(pool, w.endpointId, 'inbox'), 1);
  assert.equal(await attemptRows(pool, w.endpointId, 'inbox'), 1);
});

test('retries and lease takeovers are charged like first claims', async () => {
  const w = await budgeted(pool);
  await w.budget('inbox', { max_in_flight: 1, max_claims_per_window: 10, window: DAY_UTC });
  const todo = await w.push();
  claimedTodo(await claimNext(w.deps, w.agent, {}));
  await fail(w.deps, w.agent, { id: todo.id, error: 'flaky' });
  await dueRetry(pool, todo.id);
  claimedTodo(await claimNext(w.deps, w.agent, {}));
  await lapseLease(pool, todo.id);
  // A takeover replaces its own lapsed claim: the cap of 1 still admits it.
  const taken = await claim(w.deps, w.other, { id: todo.id });
  assert.equal(taken.admission?.in_flight, 1);
  await release(w.deps, w.other, { id: todo.id });
  claimedTodo(await claimNext(w.deps, w.agent, {}));
  assert.equal(await windowUsed(pool, w.endpointId, 'inbox'), 4);
  assert.equal(await attemptRows(pool, w.endpointId, 'inbox'), 4);
});

test('a full in-flight cap defers until a slot frees, and 0 pauses the queue', async () => {
  const w = await budgeted(pool);
  await w.budget('inbox', { max_in_flight: 1, max_claims_per_window: null, window: null });
  const held = await w.push();
  await w.push();
  claimedTodo(await claimNext(w.deps, w.agent, {}));
  const refused = await claimNext(w.deps, w.other, {});
  assert.ok('empty' in refused);
  assert.equal(refused.deferred?.[0]?.reason, 'in_flight_full');
  assert.equal(refused.deferred?.[0]?.exact, false);
  await complete(w.deps, w.agent, { id: held.id });
  claimedTodo(await claimNext(w.deps, w.other, {}));
  await w.budget('inbox', { max_in_flight: 0 });
  await w.push();
  const paused = await claimNext(w.deps, w.agent, {});
  assert.ok('empty' in paused);
  assert.equal(paused.deferred?.[0]?.reason, 'paused');
});

test('claim_next skips an exhausted queue for another granted queue with work', async () => {
  const w = await budgeted(pool, ['hot', 'cold', 'free']);
  await w.budget('hot', { max_claims_per_window: 0, window: DAY_UTC });
  await w.budget('cold', { max_in_flight: 0 });
  await w.push('hot');
  await w.push('cold');
  const free = await w.push('free');
  const got = claimedTodo(await claimNext(w.deps, w.agent, {}));
  assert.equal(got.id, free.id);
  const empty = await claimNext(w.deps, w.agent, {});
  assert.ok('empty' in empty);
  assert.deepEqual(empty.deferred?.map((d) => `${d.queue}:${d.reason}:${d.pending}`).sort(), [
    'cold:paused:1',
    'hot:window_exhausted:1',
  ]);
});

test('a zone missing from the zone database fails closed with admission_unavailable', async () => {
  const w = await budgeted(pool);
  await w.budget('inbox', { max_claims_per_window: 5, window: DAY_UTC });
  await pool.query(`UPDATE admission_policies SET window_tz = 'Mars/Olympus' WHERE endpoint_id = $1`, [w.endpointId]);
  const todo = await w.push();
  await rejects(claim(w.deps, w.agent, { id: todo.id }), 'admission_unavailable');
  const next = await claimNext(w.deps, w.agent, {});
  assert.ok('empty' in next);
  assert.equal(next.deferred?.[0]?.reason, 'admission_unavailable');
  assert.equal(await attemptRows(pool, w.endpointId, 'inbox'), 0);
});

test('pending todos of a budgeted queue carry their derived admission status on every read', async () => {
  const w = await budgeted(pool, ['inbox', 'plain']);
  await w.budget('inbox', {
    max_claims_per_window: 0,
    window: { period: 'hour', tz: 'Asia/Kathmandu', start: '00:00' },
  });
  const held = await w.push('inbox');
  const plain = await w.push('plain');
  const { todo } = await getTodo(w.deps, { endpointId: w.endpointId }, { id: held.id });
  const status = (todo as { admission?: { state: string; reason: string; exact: boolean; next_eligible_at: string } })
    .admission;
  assert.equal(status?.state, 'deferred');
  assert.equal(status?.reason, 'window_exhausted');
  assert.equal(status?.exact, true);
  // Kathmandu is +05:45: its hours start at :15 UTC.
  assert.match(status?.next_eligible_at ?? '', /T\d\d:15:00\.000Z$/);
  const page = await listTodos(w.deps, { endpointId: w.endpointId }, {});
  const byId = new Map(page.todos.map((t) => [t.id, t as { admission?: unknown }]));
  assert.ok(byId.get(held.id)?.admission);
  assert.equal(byId.get(plain.id)?.admission, undefined);
});

test('deleting the policy restores the old behaviour at once', async () => {
  const w = await budgeted(pool);
  await w.budget('inbox', { max_in_flight: 0 });
  await w.push();
  assert.ok('empty' in (await claimNext(w.deps, w.agent, {})));
  await clearPolicy({ db: pool }, { humanId: w.humanId, endpointId: null }, w.endpointId, 'inbox');
  const result = await claimNext(w.deps, w.agent, {});
  assert.ok('todo' in result && !('admission' in result));
  const audit = await pool.query<{ action: string }>(
    `SELECT action FROM admission_policy_audit WHERE endpoint_id = $1 ORDER BY id`,
    [w.endpointId],
  );
  assert.deepEqual(
    audit.rows.map((r) => r.action),
    ['create', 'delete'],
  );
});

test('claims count by queue, charges and refusals count after the fact', async () => {
  const metrics = new Metrics({ defaults: false });
  const w = await budgeted(pool, ['inbox'], { db: pool, defaultLeaseSeconds: 300, metrics });
  await w.budget('inbox', { max_claims_per_window: 2, window: DAY_UTC });
  for (let i = 0; i < 3; i++) await w.push();
  claimedTodo(await claimNext(w.deps, w.agent, {}));
  claimedTodo(await claimNext(w.deps, w.other, {}));
  assert.ok('empty' in (await claimNext(w.deps, w.agent, {})));
  const text = await metrics.registry.metrics();
  assert.match(text, /switchboard_todos_claimed_total\{queue="inbox"\} 2/);
  assert.match(text, /switchboard_admission_charged_total\{queue="inbox"\} 2/);
  assert.match(text, /switchboard_admission_refused_total\{queue="inbox",reason="window_exhausted"\} 1/);
});
