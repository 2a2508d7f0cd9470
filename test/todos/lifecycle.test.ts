// Pins the todo lifecycle of DESIGN §5: every transition, with time moved in SQL.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Pool } from '../../src/db/pool.js';
import { AppError, type ErrorCode } from '../../src/domain/errors.js';
import type { Todo } from '../../src/domain/todo.js';
import { pruneTerminal, reapExpired, requeueDueRetries } from '../../src/store/todo-sweeps.js';
import {
  cancel,
  claim,
  claimNext,
  complete,
  createTodo,
  fail,
  getTodoWithAttempts,
  heartbeat,
  release,
  retryNow,
  type Agent,
  type ClaimNextResult,
  type TodoDeps,
} from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, depsOf, makeEndpoint } from '../helpers/fixtures.js';

interface World {
  pool: Pool;
  deps: TodoDeps;
  endpointId: string;
  a: Agent;
  b: Agent;
  create: (input?: Record<string, unknown>) => Promise<{ todo: Todo; created: boolean }>;
}

// Created at the top level so its pool and database live for the whole file.
const shared = await testDatabase('lifecycle');

/**
 * A fresh endpoint with two sessions. Tests share one database (every verb is scoped by
 * endpoint) unless they run a sweep, which acts across endpoints: those ask for their own.
 */
async function world(
  label: string,
  options: { ownDatabase?: boolean; defaultLeaseSeconds?: number; serverLeaseSeconds?: number } = {},
): Promise<World> {
  const pool = options.ownDatabase ? (await testDatabase(label)).pool : shared.pool;
  const endpoint = await makeEndpoint(pool, { defaultLeaseSeconds: options.defaultLeaseSeconds });
  const deps = depsOf(pool, options.serverLeaseSeconds);
  return {
    pool,
    deps,
    endpointId: endpoint.id,
    a: agentOf(endpoint, 'session-a'),
    b: agentOf(endpoint, 'session-b'),
    create: (input = {}) =>
      createTodo(
        deps,
        { endpointId: endpoint.id },
        { humanId: endpoint.human_id },
        { queue: 'inbox', title: 'a todo', ...input },
      ),
  };
}

async function caught(promise: Promise<unknown>, code: ErrorCode): Promise<AppError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    return err;
  }
  assert.fail(`expected ${code}, but the call succeeded`);
}

function claimed(result: ClaimNextResult): Todo {
  assert.ok('todo' in result, 'expected a claimed todo, got {empty: true}');
  return result.todo;
}

/** Moves a claim past its lease: the lease and its readiness both lie in the past. */
async function lapseLease(pool: Pool, id: string): Promise<void> {
  await pool.query(
    `UPDATE todos SET lease_expires_at = now() - interval '1 second', ready_at = now() - interval '1 second' WHERE id = $1`,
    [id],
  );
}

/** Makes a failed todo's retry due now. */
async function dueRetry(pool: Pool, id: string): Promise<void> {
  await pool.query(
    `UPDATE todos SET next_retry_at = now() - interval '1 second', ready_at = now() - interval '1 second' WHERE id = $1`,
    [id],
  );
}

interface AttemptRow {
  seq: number;
  attempt: number;
  session_id: string | null;
  outcome: string | null;
  ended: boolean;
}

async function attemptsOf(pool: Pool, id: string): Promise<AttemptRow[]> {
  const res = await pool.query<AttemptRow>(
    `SELECT seq, attempt, session_id, outcome, ended_at IS NOT NULL AS ended FROM todo_attempts WHERE todo_id = $1 ORDER BY seq`,
    [id],
  );
  return res.rows;
}

async function rowOf(pool: Pool, id: string): Promise<Record<string, unknown>> {
  const res = await pool.query(`SELECT * FROM todos WHERE id = $1`, [id]);
  assert.equal(res.rowCount, 1, `todo ${id} exists`);
  return res.rows[0] as Record<string, unknown>;
}

test('a lapsed lease is taken over by claim_next without the reaper, and the old owner can no longer complete', async () => {
  const w = await world('lc_takeover');
  const { todo } = await w.create();
  assert.equal(claimed(await claimNext(w.deps, w.a, {})).id, todo.id);
  assert.deepEqual(await claimNext(w.deps, w.b, {}), { empty: true }, 'a live lease is not taken over');

  await lapseLease(w.pool, todo.id);
  const taken = claimed(await claimNext(w.deps, w.b, {}));
  assert.equal(taken.id, todo.id);
  assert.equal(taken.state, 'claimed');
  assert.equal(taken.owner_session_id, 'session-b');
  assert.equal(taken.attempt, 2);
  assert.equal(taken.claims, 2);
  assert.ok(taken.lease_expires_at && taken.lease_expires_at.getTime() > Date.now());

  assert.deepEqual(await attemptsOf(w.pool, todo.id), [
    { seq: 1, attempt: 1, session_id: 'session-a', outcome: 'lease_expired', ended: true },
    { seq: 2, attempt: 2, session_id: 'session-b', outcome: null, ended: false },
  ]);

  const lost = await caught(complete(w.deps, w.a, { id: todo.id, result: { late: true } }), 'conflict');
  assert.match(lost.message, /claimed by another session/);
  assert.deepEqual(lost.details, { id: todo.id, state: 'claimed' });

  const done = await complete(w.deps, w.b, { id: todo.id, result: { ok: 1 } });
  assert.equal(done.todo.state, 'done');
  const stored = await getTodoWithAttempts(w.deps, w.endpointId, todo.id);
  assert.deepEqual(stored.todo.result, { ok: 1 });
});

test('claim by id also takes over a lapsed lease and closes the previous attempt as lease_expired', async () => {
  const w = await world('lc_takeover_id');
  const { todo } = await w.create();
  await claim(w.deps, w.a, { id: todo.id });
  await lapseLease(w.pool, todo.id);

  const { todo: taken } = await claim(w.deps, w.b, { id: todo.id });
  assert.equal(taken.owner_session_id, 'session-b');
  assert.equal(taken.attempt, 2);
  assert.deepEqual(
    (await attemptsOf(w.pool, todo.id)).map((a) => [a.session_id, a.outcome]),
    [
      ['session-a', 'lease_expired'],
      ['session-b', null],
    ],
  );
  await caught(heartbeat(w.deps, w.a, { id: todo.id }), 'conflict');
});

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

test('fail schedules the retry 30 s after the first attempt, doubling each attempt and capped at 15 minutes', async () => {
  const w = await world('lc_backoff');
  const { todo } = await w.create({ max_attempts: 10 });
  const expected = [30, 60, 120, 240, 480, 900, 900, 900];
  const seen: number[] = [];
  for (let n = 1; n <= expected.length; n++) {
    if (n > 1) await dueRetry(w.pool, todo.id);
    const got = claimed(await claimNext(w.deps, w.a, {}));
    assert.equal(got.attempt, n);
    await fail(w.deps, w.a, { id: todo.id, error: `attempt ${n}` });
    const res = await w.pool.query<{ delay: number; from_now: number; ready_matches: boolean }>(
      `SELECT extract(epoch FROM next_retry_at - updated_at)::float8 AS delay,
              extract(epoch FROM next_retry_at - now())::float8 AS from_now,
              ready_at = next_retry_at AS ready_matches
         FROM todos WHERE id = $1`,
      [todo.id],
    );
    const r = res.rows[0];
    assert.ok(r);
    seen.push(r.delay);
    assert.ok(
      Math.abs(r.from_now - (expected[n - 1] ?? 0)) < 5,
      `attempt ${n}: next_retry_at is ~now + ${expected[n - 1]} s`,
    );
    assert.ok(r.ready_matches, `attempt ${n}: ready_at follows next_retry_at`);
  }
  assert.deepEqual(seen, expected);
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

test('release returns the todo to pending with its attempt count kept and closes the attempt as released', async () => {
  const w = await world('lc_release');
  const { todo } = await w.create();
  await claim(w.deps, w.a, { id: todo.id });
  const { todo: released } = await release(w.deps, w.a, { id: todo.id });
  assert.equal(released.state, 'pending');
  assert.equal(released.attempt, 1);
  assert.equal(released.owner_session_id, null);
  assert.equal(released.lease_expires_at, null);
  assert.deepEqual(await attemptsOf(w.pool, todo.id), [
    { seq: 1, attempt: 1, session_id: 'session-a', outcome: 'released', ended: true },
  ]);
  await caught(heartbeat(w.deps, w.a, { id: todo.id }), 'conflict');

  const again = claimed(await claimNext(w.deps, w.b, {}));
  assert.equal(again.id, todo.id);
  assert.equal(again.claims, 2);
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

test('cancel closes an open attempt as canceled and the owner loses the todo', async () => {
  const w = await world('lc_cancel');
  const { todo } = await w.create();
  await claim(w.deps, w.a, { id: todo.id });
  const { todo: canceled } = await cancel(w.deps, w.endpointId, todo.id);
  assert.equal(canceled.state, 'canceled');
  assert.equal(canceled.lease_expires_at, null);
  assert.ok(canceled.completed_at);
  assert.deepEqual(await attemptsOf(w.pool, todo.id), [
    { seq: 1, attempt: 1, session_id: 'session-a', outcome: 'canceled', ended: true },
  ]);

  const lost = await caught(complete(w.deps, w.a, { id: todo.id }), 'conflict');
  assert.deepEqual(lost.details, { id: todo.id, state: 'canceled' });
  assert.deepEqual(await claimNext(w.deps, w.b, {}), { empty: true });
  await caught(cancel(w.deps, w.endpointId, todo.id), 'conflict');
});

test('creating again with the idempotency key of a live todo returns that todo with created false', async () => {
  const w = await world('lc_idem');
  const first = await w.create({ title: 'first', idempotency_key: 'job-1' });
  assert.equal(first.created, true);
  const repeat = await w.create({ title: 'second', idempotency_key: 'job-1' });
  assert.equal(repeat.created, false);
  assert.equal(repeat.todo.id, first.todo.id);
  assert.equal(repeat.todo.title, 'first');

  await claim(w.deps, w.a, { id: first.todo.id });
  const whileClaimed = await w.create({ idempotency_key: 'job-1' });
  assert.equal(whileClaimed.created, false);
  assert.equal(whileClaimed.todo.id, first.todo.id);
  assert.equal(whileClaimed.todo.state, 'claimed');

  const count = await w.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1`, [
    w.endpointId,
  ]);
  assert.equal(count.rows[0]?.n, 1);
});

test("a completed todo's idempotency key mints a new todo", async () => {
  const w = await world('lc_idem_done');
  const first = await w.create({ idempotency_key: 'job-2' });
  await claim(w.deps, w.a, { id: first.todo.id });
  await complete(w.deps, w.a, { id: first.todo.id });

  const next = await w.create({ idempotency_key: 'job-2' });
  assert.equal(next.created, true);
  assert.notEqual(next.todo.id, first.todo.id);
  assert.equal(next.todo.state, 'pending');
  assert.equal((await rowOf(w.pool, first.todo.id)).state, 'done');
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
  assert.equal(await pruneTerminal(w.pool, 30 * 86_400, 100), 0);
});

test('heartbeat extends the lease of the todo and of its open attempt, so no one can take it over', async () => {
  const w = await world('lc_heartbeat');
  const { todo } = await w.create();
  await claim(w.deps, w.a, { id: todo.id, lease_seconds: 5 });
  await w.pool.query(`UPDATE todos SET lease_expires_at = now() + interval '1 second' WHERE id = $1`, [todo.id]);
  const before = (await rowOf(w.pool, todo.id)).lease_expires_at as Date;

  const { todo: beat } = await heartbeat(w.deps, w.a, { id: todo.id, lease_seconds: 600 });
  assert.equal(beat.state, 'claimed');
  assert.equal(beat.owner_session_id, 'session-a');
  const res = await w.pool.query<{ lease: number; attempt_matches: boolean }>(
    `SELECT extract(epoch FROM t.lease_expires_at - t.updated_at)::float8 AS lease,
            a.lease_expires_at = t.lease_expires_at AS attempt_matches
       FROM todos t JOIN todo_attempts a ON a.todo_id = t.id AND a.ended_at IS NULL
      WHERE t.id = $1`,
    [todo.id],
  );
  assert.deepEqual(res.rows, [{ lease: 600, attempt_matches: true }]);

  assert.ok(beat.lease_expires_at && beat.lease_expires_at.getTime() > before.getTime() + 500_000);

  // Two seconds pass (moved in SQL): the old lease would have lapsed, the new one holds.
  await w.pool.query(
    `UPDATE todos SET lease_expires_at = lease_expires_at - interval '2 seconds', ready_at = ready_at - interval '2 seconds'
      WHERE id = $1`,
    [todo.id],
  );
  assert.deepEqual(await claimNext(w.deps, w.b, {}), { empty: true });
  await caught(claim(w.deps, w.b, { id: todo.id }), 'conflict');
});

test('the lease is the per-call value, else the endpoint default, else the server default', async () => {
  const server = await world('lc_lease_server', { serverLeaseSeconds: 240 });
  const endpoint = await world('lc_lease_endpoint', { defaultLeaseSeconds: 90, serverLeaseSeconds: 240 });
  const leaseOf = async (w: World, id: string) =>
    (
      await w.pool.query<{ s: number }>(
        `SELECT extract(epoch FROM lease_expires_at - updated_at)::float8 AS s FROM todos WHERE id = $1`,
        [id],
      )
    ).rows[0]?.s;

  const s1 = (await server.create()).todo.id;
  await claim(server.deps, server.a, { id: s1 });
  assert.equal(await leaseOf(server, s1), 240);
  await heartbeat(server.deps, server.a, { id: s1, lease_seconds: 45 });
  assert.equal(await leaseOf(server, s1), 45);

  const e1 = (await endpoint.create()).todo.id;
  claimed(await claimNext(endpoint.deps, endpoint.a, {}));
  assert.equal(await leaseOf(endpoint, e1), 90);
  await heartbeat(endpoint.deps, endpoint.a, { id: e1 });
  assert.equal(await leaseOf(endpoint, e1), 90);
});

test('claim by id of a todo another session holds answers conflict and leaves the claim untouched', async () => {
  const w = await world('lc_claim_held');
  const { todo } = await w.create();
  await claim(w.deps, w.a, { id: todo.id });
  const before = await rowOf(w.pool, todo.id);

  const err = await caught(claim(w.deps, w.b, { id: todo.id }), 'conflict');
  assert.equal(err.message, 'cannot claim: the todo is claimed');
  assert.deepEqual(err.details, { id: todo.id, state: 'claimed' });
  assert.deepEqual(await rowOf(w.pool, todo.id), before);
  assert.equal((await attemptsOf(w.pool, todo.id)).length, 1);

  await caught(claim(w.deps, w.a, { id: todo.id }), 'conflict');
});
