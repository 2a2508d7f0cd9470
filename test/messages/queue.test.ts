// Pins the session message queue's operations on real PostgreSQL
// (docs/design/message-queue.md, acceptance scenarios 1, 2, 4–9, 13, 15, 16): capacity at
// admission, provenance-blind removal and Clear all, provenance-bound editing, hidden
// in-flight rows, session scoping of every entry id, and restore without queue_full.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAppError } from '../../src/domain/errors.js';
import { ackMessage, reservationOf, reserveNext, returnToPending } from '../../src/messages/delivery.js';
import {
  addMessage,
  clearMessages,
  editMessage,
  queueStatus,
  removeMessage,
  reorderMessages,
} from '../../src/messages/queue.js';
import { testDatabase } from '../helpers/db.js';
import { agent, depsOf, notices, oneOfEach, owner, refOf, session, stored, user, workflow } from './world.js';

const { pool, url } = await testDatabase('messages_queue');
const heard = await notices(url);

async function rejects(fn: () => Promise<unknown>, code: string, field?: string) {
  await assert.rejects(fn, (err: unknown) => {
    assert.ok(isAppError(err), String(err));
    assert.equal(err.code, code, err.message);
    if (field) assert.equal(err.details?.field, field, err.message);
    return true;
  });
}

test('with an empty queue the 10th add succeeds and the 11th is queue_full {10, 0, 10}; 10 rows exist', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  for (let i = 1; i <= 10; i++) await addMessage(deps, user(o), o.sessionId, { content: `m${i}` });
  await assert.rejects(
    () => addMessage(deps, user(o), o.sessionId, { content: 'one too many' }),
    (err: unknown) => {
      assert.ok(isAppError(err, 'queue_full'));
      assert.deepEqual(err.details, { queue_size: 10, reserved: 0, max: 10 });
      return true;
    },
  );
  assert.equal((await stored(pool, o.sessionId)).length, 10);
});

test('an in-flight row counts toward the capacity and queue_full says how many are reserved', async () => {
  const deps = depsOf(pool, 3);
  const o = await owner(pool);
  for (let i = 1; i <= 3; i++) await addMessage(deps, user(o), o.sessionId, { content: `m${i}` });
  assert.ok(await reserveNext(deps, refOf(o)));
  await assert.rejects(
    () => addMessage(deps, user(o), o.sessionId, { content: 'full' }),
    (err: unknown) => isAppError(err, 'queue_full') && (err.details?.reserved as number) === 1,
  );
  assert.equal((await queueStatus(deps, user(o), o.sessionId)).count, 2);
});

test('with capacity 0, 25 adds succeed and status reports max 0', async () => {
  const deps = depsOf(pool, 0);
  const o = await owner(pool);
  for (let i = 1; i <= 25; i++) await addMessage(deps, user(o), o.sessionId, { content: `m${i}` });
  const status = await queueStatus(deps, user(o), o.sessionId);
  assert.equal(status.max, 0);
  assert.equal(status.count, 25);
});

test('Clear all removes one row of each provenance: {removed: 4}, status empty, one notice', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  await oneOfEach(deps, o, addMessage);
  await heard.settle();
  const before = heard.count(o.sessionId);
  const cleared = await clearMessages(deps, user(o), o.sessionId);
  assert.equal(cleared.removed, 4);
  assert.equal((await queueStatus(deps, user(o), o.sessionId)).count, 0);
  await heard.settle();
  assert.equal(heard.count(o.sessionId) - before, 1);
});

test('Clear all on an empty queue answers {removed: 0} and announces nothing', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  await heard.settle();
  const before = heard.count(o.sessionId);
  assert.equal((await clearMessages(deps, user(o), o.sessionId)).removed, 0);
  await heard.settle();
  assert.equal(heard.count(o.sessionId), before);
});

test('removing a visible row of each provenance succeeds; the rest keep their order and queued_by', async () => {
  const deps = depsOf(pool);
  for (const victim of [0, 1, 2, 3]) {
    const o = await owner(pool);
    const ids = await oneOfEach(deps, o, addMessage);
    const target = ids[victim] as string;
    assert.deepEqual(await removeMessage(deps, user(o), o.sessionId, { entry_id: target }), { entry_id: target });
    const rest = await stored(pool, o.sessionId);
    assert.deepEqual(
      rest.map((r) => r.id),
      ids.filter((id) => id !== target),
    );
    const kinds = ['user', 'agent', 'workflow', 'server'].filter((_, i) => i !== victim);
    assert.deepEqual(
      rest.map((r) => r.queued_by),
      kinds,
    );
    await rejects(() => removeMessage(deps, user(o), o.sessionId, { entry_id: target }), 'entry_not_found');
  }
});

test('only the same provenance and the same sender edit: agent, workflow, server and another human’s rows are refused', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  const [mine, byAgent, byWorkflow, byServer] = await oneOfEach(deps, o, addMessage);
  for (const id of [byAgent, byWorkflow, byServer] as string[]) {
    await rejects(
      () => editMessage(deps, user(o), o.sessionId, { entry_id: id, content: 'hijacked' }),
      'entry_not_found',
    );
  }
  const other = await owner(pool);
  const theirs = await addMessage(deps, user(other), other.sessionId, { content: 'theirs' });
  await rejects(
    () => editMessage(deps, user(o), other.sessionId, { entry_id: theirs.entry.id, content: 'x' }),
    'not_found',
  );
  // A row queued by someone else as `user` (a workflow of the same human is not the human).
  await rejects(
    () => editMessage(deps, workflow(o), o.sessionId, { entry_id: mine as string, content: 'x' }),
    'entry_not_found',
  );
  const edited = await editMessage(deps, user(o), o.sessionId, { entry_id: mine as string, content: 'edited' });
  assert.equal(edited.entry.content, 'edited');
  assert.deepEqual(
    (await stored(pool, o.sessionId)).map((r) => r.content),
    ['edited', 'from an agent', 'from a workflow', 'from the server'],
  );
});

test('a client claiming queued_by on add or update is a validation error and nothing changes', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  const { entry } = await addMessage(deps, user(o), o.sessionId, { content: 'mine' });
  for (const claim of ['agent', 'workflow', 'server', 'user']) {
    await rejects(
      () => addMessage(deps, user(o), o.sessionId, { content: 'x', queued_by: claim }),
      'invalid_argument',
      'queued_by',
    );
    await rejects(
      () => editMessage(deps, user(o), o.sessionId, { entry_id: entry.id, content: 'x', queued_by: claim }),
      'invalid_argument',
      'queued_by',
    );
  }
  const rows = await stored(pool, o.sessionId);
  assert.deepEqual(
    rows.map((r) => [r.content, r.queued_by]),
    [['mine', 'user']],
  );
  assert.equal((await addMessage(deps, agent(o), o.sessionId, { content: 'a' })).entry.queued_by, 'agent');
  assert.equal((await addMessage(deps, workflow(o), o.sessionId, { content: 'w' })).entry.queued_by, 'workflow');
});

test('one reserved row plus one visible: Clear all removes 1, the reserved row stays and its ack succeeds', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  await addMessage(deps, agent(o), o.sessionId, { content: 'in flight' });
  await addMessage(deps, user(o), o.sessionId, { content: 'visible' });
  const reserved = await reserveNext(deps, refOf(o));
  assert.ok(reserved);
  assert.equal((await clearMessages(deps, user(o), o.sessionId)).removed, 1);
  assert.deepEqual(
    (await stored(pool, o.sessionId)).map((r) => [r.id, r.reserved_in_flight]),
    [[reserved.id, true]],
  );
  assert.deepEqual(await ackMessage(deps, refOf(o), { message_id: reserved.id }), {
    acknowledged: true,
    message_id: reserved.id,
  });
  assert.equal((await stored(pool, o.sessionId)).length, 0);
});

test('removing a reserved row by id is entry_not_found; it stays stored and hidden', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  await addMessage(deps, user(o), o.sessionId, { content: 'head' });
  const reserved = await reserveNext(deps, refOf(o));
  assert.ok(reserved);
  await rejects(() => removeMessage(deps, user(o), o.sessionId, { entry_id: reserved.id }), 'entry_not_found');
  await rejects(
    () => editMessage(deps, user(o), o.sessionId, { entry_id: reserved.id, content: 'x' }),
    'entry_not_found',
  );
  assert.equal((await stored(pool, o.sessionId)).length, 1);
  assert.deepEqual((await queueStatus(deps, user(o), o.sessionId)).entries, []);
});

test('an entry id of session B named under session A never touches B’s row', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  const b = { ...o, sessionId: await session(pool, o.endpointId) };
  await addMessage(deps, user(o), o.sessionId, { content: 'in A' });
  const inB = await addMessage(deps, user(b), b.sessionId, { content: 'in B' });
  const id = inB.entry.id;
  await rejects(() => removeMessage(deps, user(o), o.sessionId, { entry_id: id }), 'entry_not_found');
  await rejects(() => editMessage(deps, user(o), o.sessionId, { entry_id: id, content: 'x' }), 'entry_not_found');
  await rejects(() => reorderMessages(deps, user(o), o.sessionId, { entry_ids: [id] }), 'queue_changed');
  const rowsB = await stored(pool, b.sessionId);
  assert.deepEqual(
    rowsB.map((r) => [r.id, r.content]),
    [[id, 'in B']],
  );
});

test('reorder takes an exact permutation of the visible ids, else queue_changed', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  const ids = [];
  for (const c of ['a', 'b', 'c']) ids.push((await addMessage(deps, user(o), o.sessionId, { content: c })).entry.id);
  const [a, b, c] = ids as [string, string, string];
  const status = await reorderMessages(deps, user(o), o.sessionId, { entry_ids: [c, a, b] });
  assert.deepEqual(
    status.entries.map((e) => [e.content, e.position]),
    [
      ['c', 1],
      ['a', 2],
      ['b', 3],
    ],
  );
  for (const wrong of [
    [c, a],
    [c, a, b, b],
    [c, a, a],
  ]) {
    await rejects(() => reorderMessages(deps, user(o), o.sessionId, { entry_ids: wrong }), 'queue_changed');
  }
});

test('10 rows and capacity lowered to 3: all stay, max 3, adds refused until 2 remain', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  const ids = [];
  for (let i = 1; i <= 10; i++) ids.push((await addMessage(deps, user(o), o.sessionId, { content: `m${i}` })).entry.id);
  await deps.capacity.save({ max_per_session: 3 });
  const status = await queueStatus(deps, user(o), o.sessionId);
  assert.equal(status.count, 10);
  assert.equal(status.max, 3);
  for (const id of ids.slice(0, 8)) {
    await rejects(() => addMessage(deps, user(o), o.sessionId, { content: 'refused' }), 'queue_full');
    await removeMessage(deps, user(o), o.sessionId, { entry_id: id });
  }
  assert.equal((await stored(pool, o.sessionId)).length, 2);
  await addMessage(deps, user(o), o.sessionId, { content: 'admitted' });
  assert.equal((await stored(pool, o.sessionId)).length, 3);
  await pool.query(`DELETE FROM settings`);
});

test('under a lowered capacity a failed delivery returns to pending at its position with its identity', async () => {
  const deps = depsOf(pool);
  const o = await owner(pool);
  for (let i = 1; i <= 5; i++) await addMessage(deps, agent(o), o.sessionId, { content: `m${i}` });
  const before = await stored(pool, o.sessionId);
  const reserved = await reserveNext(deps, refOf(o));
  assert.ok(reserved);
  await deps.capacity.save({ max_per_session: 2 });
  assert.equal(await returnToPending(deps, reservationOf(reserved), true), true);
  const after = await stored(pool, o.sessionId);
  assert.deepEqual(after, before);
  assert.equal((await queueStatus(deps, user(o), o.sessionId)).entries[0]?.id, reserved.id);
  await pool.query(`DELETE FROM settings`);
});
