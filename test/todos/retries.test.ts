// Pins what happens after a lease lapses or an attempt fails: the reaper, dead letters at
// the cap, the retry schedule, due retries, retry_now, and retention.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jitteredDelayBounds } from '../../src/domain/backoff.js';
import { pruneTerminal, reapExpired, requeueDueRetries } from '../../src/store/todo-sweeps.js';
import { cancel, claim, claimNext, complete, fail, getTodoWithAttempts, retryNow } from '../../src/todos/index.js';
import { attemptsOf, caught, claimed, dueRetry, lapseLease, rowOf, world } from './world.js';

test('the reaper puts a lapsed claim back to pending, keeps its attempt count and closes the attempt as lease_expired', async () => {
  const w = await world('lc_reaper', { ownDatabase: true });
  const { todo: lapsed } = await w.create({ title: 'lapsed' });
  const { todo: live } = await w.create({ title: 'live' });
  await claim(w.deps, w.a, { id: lapsed.id });
  await claim(w.deps, w.a, { id: live.id });
  await w.pool.query(`UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [lapsed.id]);

  assert.deepEqual(await reapExpired(w.pool, 100), { requeued: 1, deadLettered: 0 });

  const row = await rowOf(w.pool, lapsed.id);
  assert.equal(row.state, 'pending');
  assert.equal(row.owner_session_id, null);
  assert.equal(row.lease_expires_at, null);
  assert.equal(row.attempt, 1);
  assert.deepEqual(await attemptsOf(w.pool, lapsed.id), [
    { seq: 1, attempt: 1, session_id: 'session-a', outcome: 'lease_expired', ended: true },
  ]);

  const other = await rowOf(w.pool, live.id);
  assert.equal(other.state, 'claimed', 'a live lease is left alone');
  assert.equal(other.owner_session_id, 'session-a');

  const again = claimed(await claimNext(w.deps, w.b, {}));
  assert.equal(again.id, lapsed.id);
  assert.equal(again.attempt, 2);
  await caught(complete(w.deps, w.a, { id: lapsed.id }), 'conflict');
  assert.deepEqual(await reapExpired(w.pool, 100), { requeued: 0, deadLettered: 0 }, 'nothing left to reap');
});

test('fail on the last attempt dead-letters the todo: failed, next_retry_at null, never claimable or requeued', async () => {
  const w = await world('lc_dead_fail', { ownDatabase: true });
  const { todo } = await w.create({ max_attempts: 2 });
  await claim(w.deps, w.a, { id: todo.id });
  const first = await fail(w.deps, w.a, { id: todo.id, error: 'first' });
  assert.equal(first.todo.state, 'failed');
  assert.ok(first.todo.next_retry_at, 'attempts left: a retry is scheduled');

  await dueRetry(w.pool, todo.id);
  await claim(w.deps, w.a, { id: todo.id });
  const last = await fail(w.deps, w.a, { id: todo.id, error: 'last' });
  assert.equal(last.todo.state, 'failed');
  assert.equal(last.todo.attempt, 2);
  assert.equal(last.todo.next_retry_at, null);
  assert.equal(last.todo.error, 'last');

  // Even with its readiness forced into the past, the predicate refuses it.
  await w.pool.query(`UPDATE todos SET ready_at = now() - interval '1 second' WHERE id = $1`, [todo.id]);
  assert.deepEqual(await claimNext(w.deps, w.b, {}), { empty: true });
  await caught(claim(w.deps, w.b, { id: todo.id }), 'conflict');
  assert.equal(await requeueDueRetries(w.pool, 100), 0);
  assert.equal((await rowOf(w.pool, todo.id)).state, 'failed');
  assert.deepEqual(
    (await attemptsOf(w.pool, todo.id)).map((a) => a.outcome),
    ['failed', 'failed'],
  );
});

test('a lapsed lease on the last attempt is not taken over, and the reaper dead-letters it', async () => {
  const w = await world('lc_dead_reap', { ownDatabase: true });
  const { todo } = await w.create({ max_attempts: 1 });
  await claim(w.deps, w.a, { id: todo.id });
  await lapseLease(w.pool, todo.id);

  assert.deepEqual(await claimNext(w.deps, w.b, {}), { empty: true });
  const refused = await caught(claim(w.deps, w.b, { id: todo.id }), 'conflict');
  assert.deepEqual(refused.details, { id: todo.id, state: 'claimed' });

  assert.deepEqual(await reapExpired(w.pool, 100), { requeued: 0, deadLettered: 1 });
  const row = await rowOf(w.pool, todo.id);
  assert.equal(row.state, 'failed');
  assert.equal(row.next_retry_at, null);
  assert.equal(row.lease_expires_at, null);
  assert.equal(row.ready_at, null);
  assert.equal(row.attempt, 1);
  assert.match(String(row.error), /lease expired/);
  assert.deepEqual(await attemptsOf(w.pool, todo.id), [
    { seq: 1, attempt: 1, session_id: 'session-a', outcome: 'lease_expired', ended: true },
  ]);

  assert.deepEqual(await claimNext(w.deps, w.b, {}), { empty: true });
  assert.equal(await requeueDueRetries(w.pool, 100), 0);
  await caught(complete(w.deps, w.a, { id: todo.id }), 'conflict');
});

test('fail schedules the retry 30 s after the first attempt, doubling each attempt and capped at 15 minutes, ±20 % jitter', async () => {
  const w = await world('lc_backoff');
  const { todo } = await w.create({ max_attempts: 10 });
  const expected = [30, 60, 120, 240, 480, 900, 900, 900];
  for (let n = 1; n <= expected.length; n++) {
    if (n > 1) await dueRetry(w.pool, todo.id);
    const got = claimed(await claimNext(w.deps, w.a, {}));
    assert.equal(got.attempt, n);
    await fail(w.deps, w.a, { id: todo.id, error: `attempt ${n}` });
    const res = await w.pool.query<{ delay: number; ready_matches: boolean }>(
      `SELECT extract(epoch FROM next_retry_at - updated_at)::float8 AS delay, ready_at = next_retry_at AS ready_matches
         FROM todos WHERE id = $1`,
      [todo.id],
    );
    const r = res.rows[0];
    assert.ok(r);
    const { min, max } = jitteredDelayBounds(expected[n - 1] ?? 0);
    assert.ok(r.delay >= min - 0.01 && r.delay <= max + 0.01, `attempt ${n}: ${r.delay} s within [${min}, ${max}]`);
    assert.ok(r.ready_matches, `attempt ${n}: ready_at follows next_retry_at`);
  }
});

test('a failed todo whose retry is due is claimable by claim_next', async () => {
  const w = await world('lc_due_claim');
  const { todo } = await w.create();
  await claim(w.deps, w.a, { id: todo.id });
  await fail(w.deps, w.a, { id: todo.id, error: 'boom' });
  assert.deepEqual(await claimNext(w.deps, w.b, {}), { empty: true }, 'not due yet');

  await dueRetry(w.pool, todo.id);
  const again = claimed(await claimNext(w.deps, w.b, {}));
  assert.equal(again.id, todo.id);
  assert.equal(again.state, 'claimed');
  assert.equal(again.attempt, 2);
  assert.equal(again.next_retry_at, null);
  assert.deepEqual(
    (await attemptsOf(w.pool, todo.id)).map((a) => [a.session_id, a.outcome]),
    [
      ['session-a', 'failed'],
      ['session-b', null],
    ],
  );
});

test('requeueDueRetries moves due failed todos to pending and leaves the not-yet-due ones', async () => {
  const w = await world('lc_requeue', { ownDatabase: true });
  const { todo: due } = await w.create({ title: 'due' });
  const { todo: later } = await w.create({ title: 'later' });
  for (const t of [due, later]) {
    await claim(w.deps, w.a, { id: t.id });
    await fail(w.deps, w.a, { id: t.id });
  }
  await dueRetry(w.pool, due.id);

  assert.equal(await requeueDueRetries(w.pool, 100), 1);
  const moved = await rowOf(w.pool, due.id);
  assert.equal(moved.state, 'pending');
  assert.equal(moved.next_retry_at, null);
  assert.equal(moved.attempt, 1);
  const kept = await rowOf(w.pool, later.id);
  assert.equal(kept.state, 'failed');
  assert.ok(kept.next_retry_at);

  const got = claimed(await claimNext(w.deps, w.b, {}));
  assert.equal(got.id, due.id);
  assert.equal(got.attempt, 2);
  assert.deepEqual(await claimNext(w.deps, w.b, {}), { empty: true });
  assert.equal(await requeueDueRetries(w.pool, 100), 0);
});

test('retry_now puts a dead letter back to pending with attempt 0 and keeps the attempt history', async () => {
  const w = await world('lc_retry_now');
  const { todo } = await w.create({ max_attempts: 1 });
  await claim(w.deps, w.a, { id: todo.id });
  await fail(w.deps, w.a, { id: todo.id, error: 'gave up' });

  const { todo: revived } = await retryNow(w.deps, w.endpointId, todo.id);
  assert.equal(revived.state, 'pending');
  assert.equal(revived.attempt, 0);
  assert.equal(revived.error, null);
  assert.equal(revived.next_retry_at, null);
  assert.equal(revived.claims, 1);
  assert.deepEqual(
    (await attemptsOf(w.pool, todo.id)).map((a) => a.outcome),
    ['failed'],
  );

  const again = claimed(await claimNext(w.deps, w.b, {}));
  assert.equal(again.id, todo.id);
  assert.equal(again.attempt, 1);
  const { attempts } = await getTodoWithAttempts(w.deps, w.endpointId, todo.id);
  assert.deepEqual(
    attempts.map((a) => [a.seq, a.attempt, a.session_id, a.outcome]),
    [
      [1, 1, 'session-a', 'failed'],
      [2, 1, 'session-b', null],
    ],
  );
  await complete(w.deps, w.b, { id: todo.id });
  await caught(retryNow(w.deps, w.endpointId, todo.id), 'conflict');
});

test('retention deletes terminal todos older than the cutoff with their attempts, and never live ones', async () => {
  const w = await world('lc_retention', { ownDatabase: true });
  const make = async (title: string, maxAttempts = 5) => (await w.create({ title, max_attempts: maxAttempts })).todo.id;
  const doneOld = await make('done old');
  const canceledOld = await make('canceled old');
  const deadOld = await make('dead letter old', 1);
  const doneRecent = await make('done recent');
  const pendingOld = await make('pending old');
  const claimedOld = await make('claimed old');
  const retryingOld = await make('failed with a retry old');

  for (const id of [doneOld, doneRecent]) {
    await claim(w.deps, w.a, { id });
    await complete(w.deps, w.a, { id });
  }
  await cancel(w.deps, w.endpointId, canceledOld);
  await claim(w.deps, w.a, { id: deadOld });
  await fail(w.deps, w.a, { id: deadOld });
  await claim(w.deps, w.a, { id: claimedOld });
  await claim(w.deps, w.a, { id: retryingOld });
  await fail(w.deps, w.a, { id: retryingOld });

  const old = [doneOld, canceledOld, deadOld, pendingOld, claimedOld, retryingOld];
  await w.pool.query(`UPDATE todos SET updated_at = now() - interval '31 days' WHERE id = ANY($1::text[])`, [old]);

  assert.equal(await pruneTerminal(w.pool, 30 * 86_400, 100), 3);
  const left = await w.pool.query<{ id: string }>(`SELECT id FROM todos ORDER BY id`);
  assert.deepEqual(left.rows.map((r) => r.id).sort(), [doneRecent, pendingOld, claimedOld, retryingOld].sort());
  const orphans = await w.pool.query(`SELECT 1 FROM todo_attempts WHERE todo_id = ANY($1::text[])`, [
    [doneOld, canceledOld, deadOld],
  ]);
  assert.equal(orphans.rowCount, 0);
  assert.equal((await attemptsOf(w.pool, doneRecent)).length, 1, 'the attempts of kept todos stay');
  assert.equal(await pruneTerminal(w.pool, 30 * 86_400, 100), 0);
});
