// Pins the todo lifecycle of docs/design/todos.md: every transition, with time moved in SQL.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  cancel,
  claim,
  claimNext,
  complete,
  createTodo,
  getTodoWithAttempts,
  heartbeat,
  release,
} from '../../src/todos/index.js';
import { type World, attemptsOf, caught, claimed, lapseLease, rowOf, world } from './world.js';

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

test("a completed todo's idempotency key answers it within the window and mints a new todo after it", async () => {
  const w = await world('lc_idem_done');
  const first = await w.create({ idempotency_key: 'job-2' });
  await claim(w.deps, w.a, { id: first.todo.id });
  await complete(w.deps, w.a, { id: first.todo.id });

  const within = await w.create({ idempotency_key: 'job-2' });
  assert.equal(within.created, false);
  assert.equal(within.todo.id, first.todo.id);
  assert.equal(within.todo.state, 'done');

  const windowSeconds = 3_600;
  const narrow = { ...w.deps, idempotencyWindowSeconds: windowSeconds };
  await w.pool.query(`UPDATE todos SET updated_at = now() - make_interval(secs => $2 + 1) WHERE id = $1`, [
    first.todo.id,
    windowSeconds,
  ]);
  const owner = await w.pool.query<{ human_id: string }>('SELECT human_id FROM endpoints WHERE id = $1', [
    w.endpointId,
  ]);
  const humanId = owner.rows[0]?.human_id ?? '';
  const next = await createTodo(
    narrow,
    { endpointId: w.endpointId },
    { humanId },
    {
      queue: 'inbox',
      title: 'again',
      idempotency_key: 'job-2',
    },
  );
  assert.equal(next.created, true);
  assert.notEqual(next.todo.id, first.todo.id);
  assert.equal(next.todo.state, 'pending');
  assert.equal((await rowOf(w.pool, first.todo.id)).state, 'done');
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
