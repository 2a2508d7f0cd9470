// Ring on attach against a ring made a moment earlier (docs/design/doorbell-acknowledgement.md,
// "Rings"): a ready pass that picks a stream the instant it opens, and that stream's own
// attach pass, ring a todo once between them. The ring rows are written after delivery, so
// these tests call the ring statement alone, as the two passes do before any row exists.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PoolClient } from 'pg';
import { claimDigestTarget } from '../../src/store/presence.js';
import { claimRings, type RingReason, type RungTodo } from '../../src/store/rings.js';
import { insertSession, setStreamOpen } from '../../src/store/sessions.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { barrier, makeEndpoint } from '../helpers/fixtures.js';

const { pool } = await testDatabase('doorbell_attach_race');

type Endpoint = Awaited<ReturnType<typeof makeEndpoint>>;

async function openSession(ep: Endpoint, id: string): Promise<void> {
  await insertSession(pool, { endpointId: ep.id, id, clientName: 'c', clientVersion: '1', instance: 'i1' });
  await stream(ep, id, true);
}

const stream = (ep: Endpoint, id: string, open: boolean) =>
  setStreamOpen(pool, { endpointId: ep.id, id, instance: 'i1', open });

async function newTodo(ep: Endpoint, title: string): Promise<string> {
  const todo = await createTodo(
    { db: pool, defaultLeaseSeconds: 300 },
    { endpointId: ep.id },
    { humanId: ep.human_id },
    { queue: 'inbox', title },
  );
  return todo.todo.id;
}

const ring = (ep: Endpoint, reason: RingReason): Promise<RungTodo[]> =>
  claimRings(pool, { endpointId: ep.id, maxRings: 6, limit: 10, reason });
const ready: RingReason = { kind: 'ready', queue: 'inbox' };
const attach = (sessionId: string): RingReason => ({ kind: 'attach', sessionId });

test('an attach pass does not ring again what a ready pass just rang to the same open stream', async () => {
  const ep = await makeEndpoint(pool);
  await openSession(ep, 'ms_a');
  const id = await newTodo(ep, 'rung once');
  assert.deepEqual(
    (await ring(ep, ready)).map((r) => [r.id, r.session_id]),
    [[id, 'ms_a']],
  );
  assert.deepEqual(await ring(ep, attach('ms_a')), []);
});

test('a reconnect of the same session hears the ring its dropped stream missed', async () => {
  const ep = await makeEndpoint(pool);
  await openSession(ep, 'ms_a');
  const id = await newTodo(ep, 'missed');
  assert.equal((await ring(ep, ready)).length, 1);
  await stream(ep, 'ms_a', false);
  await stream(ep, 'ms_a', true);
  assert.deepEqual(
    (await ring(ep, attach('ms_a'))).map((r) => r.id),
    [id],
  );
});

test('a ring to another open stream holds off the attach until that stream is gone', async () => {
  const ep = await makeEndpoint(pool);
  await openSession(ep, 'ms_b');
  const id = await newTodo(ep, 'rung to b');
  assert.deepEqual(
    (await ring(ep, ready)).map((r) => r.session_id),
    ['ms_b'],
  );
  await openSession(ep, 'ms_a');
  assert.deepEqual(await ring(ep, attach('ms_a')), [], 'b still listens');
  await stream(ep, 'ms_b', false);
  assert.deepEqual(
    (await ring(ep, attach('ms_a'))).map((r) => [r.id, r.session_id]),
    [[id, 'ms_a']],
  );
});

test('racing ready and attach passes on a stream that just opened ring each todo once', async () => {
  const ep = await makeEndpoint(pool);
  const rounds = 25;
  for (let i = 0; i < rounds; i++) {
    const session = `ms_race_${i}`;
    await openSession(ep, session);
    const id = await newTodo(ep, `race ${i}`);
    const go = barrier(2);
    const race = async (reason: RingReason): Promise<RungTodo[]> => {
      await go();
      return ring(ep, reason);
    };
    const passes: RungTodo[][] = await Promise.all([race(ready), race(attach(session))]);
    const rung = passes.flat().filter((r) => r.id === id);
    assert.equal(rung.length, 1, `round ${i}: rung ${rung.length} times`);
    // The next round's session must win the ready pass's rotation: this one stops listening.
    await stream(ep, session, false);
  }
});

// A ring statement's now() is when it began; the todos it sees are those committed before
// its snapshot, taken a moment later (after planning, which a cold connection on a loaded
// machine makes milliseconds long). A create that begins and commits in that gap has an
// updated_at after the ring's now(): stamped now(), the ring read as older than the todo
// and the todo's own ready pass rang it a second time (CI, Node 24). An open transaction
// pins now() the same way, so this replays that gap exactly, for each statement that
// stamps todos rung: a ready pass, an attach pass and a presence digest.
const early: Array<[string, (db: PoolClient, ep: Endpoint) => Promise<unknown>]> = [
  ['a ready pass', (db, ep) => claimRings(db, { endpointId: ep.id, maxRings: 6, limit: 10, reason: ready })],
  [
    'an attach pass',
    (db, ep) => claimRings(db, { endpointId: ep.id, maxRings: 6, limit: 10, reason: attach('ms_gap') }),
  ],
  ['a presence digest', (db, ep) => claimDigestTarget(db, { endpointId: ep.id, queues: ['inbox'] })],
];
for (const [name, stamp] of early) {
  test(`${name} that began before a create it then saw counts as that todo's ring`, async () => {
    const ep = await makeEndpoint(pool);
    await openSession(ep, 'ms_gap');
    const db = await pool.connect();
    try {
      await db.query('BEGIN');
      await db.query('SELECT now()');
      const id = await newTodo(ep, `created after ${name} began`);
      assert.ok(await stamp(db, ep));
      await db.query('COMMIT');
      const row = await pool.query('SELECT last_ringed_at, updated_at FROM todos WHERE id = $1', [id]);
      assert.ok(row.rows[0].last_ringed_at >= row.rows[0].updated_at, 'the stamp is not before the todo it saw');
    } finally {
      db.release();
    }
    assert.deepEqual(await ring(ep, ready), [], 'the todo’s own ready pass finds it rung');
  });
}
