// Pins what an owner verb's conflict tells the agent (docs/design/todos.md, "not_found
// versus conflict"): a session that never held the todo, one whose lease lapsed and was
// taken over, one whose lapsed claim was put back, and one whose todo is already settled
// each hear which it is, so the agent knows whether to stop, claim first or move on.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cancel, claim, claimNext, complete, heartbeat, release } from '../../src/todos/index.js';
import { caught, claimed, lapseLease, world } from './world.js';

test('a session that never held the todo is told so, not that it lost it', async () => {
  const w = await world('cm_never');
  const { todo } = await w.create();
  await claim(w.deps, w.a, { id: todo.id });
  const err = await caught(complete(w.deps, w.b, { id: todo.id }), 'conflict');
  assert.match(err.message, /^cannot complete: the todo is claimed by another session, and this session never held it/);
  assert.doesNotMatch(err.message, /lost it/);
  assert.deepEqual(err.details, { id: todo.id, state: 'claimed' });

  const { todo: pending } = await w.create({ title: 'nobody holds me' });
  const idle = await caught(heartbeat(w.deps, w.b, { id: pending.id }), 'conflict');
  assert.match(idle.message, /^cannot heartbeat: the todo is pending, and this session never held it.*claim it first$/);
});

test('a lapsed lease taken over by another session is "you lost it"', async () => {
  const w = await world('cm_takeover');
  const { todo } = await w.create();
  await claim(w.deps, w.a, { id: todo.id });
  await lapseLease(w.pool, todo.id);
  assert.equal(claimed(await claimNext(w.deps, w.b, {})).id, todo.id);
  const err = await caught(heartbeat(w.deps, w.a, { id: todo.id }), 'conflict');
  assert.match(err.message, /^cannot heartbeat: your lease lapsed and the todo is now claimed by another session/);
  assert.match(err.message, /you lost it; do not continue its work/);
});

test('a lapsed claim the reaper put back says so and offers to claim it again', async () => {
  const w = await world('cm_reaped');
  const { todo } = await w.create();
  await claim(w.deps, w.a, { id: todo.id });
  // What the reaper writes: back to pending, the attempt closed as lease_expired.
  await w.pool.query(
    `UPDATE todos SET state = 'pending', owner_session_id = NULL, lease_expires_at = NULL, ready_at = now() WHERE id = $1`,
    [todo.id],
  );
  await w.pool.query(
    `UPDATE todo_attempts SET ended_at = now(), outcome = 'lease_expired' WHERE todo_id = $1 AND ended_at IS NULL`,
    [todo.id],
  );
  const err = await caught(complete(w.deps, w.a, { id: todo.id }), 'conflict');
  assert.match(
    err.message,
    /^cannot complete: your lease lapsed \(the todo is now pending; you lost it.*claim it again\)$/,
  );
});

test('settled work answers what happened to it', async () => {
  const w = await world('cm_settled');
  const { todo } = await w.create();
  await claim(w.deps, w.a, { id: todo.id });
  await complete(w.deps, w.a, { id: todo.id });
  const again = await caught(complete(w.deps, w.a, { id: todo.id }), 'conflict');
  assert.equal(again.message, 'cannot complete: you already completed the todo (it is done)');

  const { todo: other } = await w.create({ title: 'let go' });
  await claim(w.deps, w.a, { id: other.id });
  await release(w.deps, w.a, { id: other.id });
  const released = await caught(heartbeat(w.deps, w.a, { id: other.id }), 'conflict');
  assert.match(released.message, /^cannot heartbeat: you released the todo \(now pending\); claim it again/);

  const { todo: third } = await w.create({ title: 'canceled' });
  await claim(w.deps, w.a, { id: third.id });
  await cancel(w.deps, w.endpointId, third.id);
  const canceled = await caught(complete(w.deps, w.a, { id: third.id }), 'conflict');
  assert.match(canceled.message, /^cannot complete: a human canceled the todo/);
});
