// Pins the message queue under real concurrency on PostgreSQL: remove vs reserve on the
// head and Clear all vs reserve on a 5-row queue, each interleaving forced (both
// operations in flight, queued on the session's lock row behind a gate, then released in
// a chosen order) and raced freely through a barrier, many times; two instances reserving
// one session's head never both get it; two admins saving at once leave persisted = live
// = the last write on both instances.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { NotifyBus } from '../../src/db/bus.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { isAppError } from '../../src/domain/errors.js';
import { CapacitySetting } from '../../src/messages/capacity.js';
import type { MessageDeps } from '../../src/messages/context.js';
import { ackMessage, reserveNext, returnSessionToPending } from '../../src/messages/delivery.js';
import { addMessage, clearMessages, removeMessage } from '../../src/messages/queue.js';
import { testDatabase } from '../helpers/db.js';
import { barrier } from '../helpers/fixtures.js';
import { owner, refOf, stored, user, type Owner } from './world.js';

const { pool, url, name } = await testDatabase('messages_races', 4);
const racers = createPool({ url, max: 8 });
after(() => racers.end());
const deps: MessageDeps = { db: racers, capacity: new CapacitySetting({ db: racers, envCapacity: 0 }) };

const ROUNDS = 15;

/** Backends of this database waiting on a lock. */
async function waiting(): Promise<number> {
  const res = await pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`,
    [name],
  );
  return res.rows[0]?.n ?? 0;
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/**
 * Runs `first` and `second` concurrently, both queued on the session's lock row behind a
 * gate transaction, `first` queued first; the gate then commits and they proceed in that
 * order. Their outcomes (value or error), in the order given.
 */
async function forced<A, B>(o: Owner, first: () => Promise<A>, second: () => Promise<B>) {
  const gate = await pool.connect();
  try {
    await gate.query('BEGIN');
    await gate.query('SELECT 1 FROM queue_session_locks WHERE session_id = $1 FOR UPDATE', [o.sessionId]);
    const a = first().then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    await until(async () => (await waiting()) === 1, 'the first operation to queue');
    const b = second().then(
      (v) => ({ ok: true as const, v }),
      (e: unknown) => ({ ok: false as const, e }),
    );
    await until(async () => (await waiting()) === 2, 'the second operation to queue');
    await gate.query('COMMIT');
    return [await a, await b] as const;
  } finally {
    gate.release();
  }
}

/** A session with `n` pending messages and its lock row in place; their ids in order. */
async function queueOf(n: number): Promise<{ o: Owner; ids: string[] }> {
  const o = await owner(pool);
  const ids = [];
  for (let i = 1; i <= n; i++) ids.push((await addMessage(deps, user(o), o.sessionId, { content: `m${i}` })).entry.id);
  return { o, ids };
}

async function checkRemoveVsReserve(o: Owner, head: string, removed: boolean, reserved: { id: string } | null) {
  assert.ok(removed !== (reserved !== null), `exactly one wins: removed ${removed}, reserved ${reserved?.id}`);
  if (reserved) {
    assert.equal(reserved.id, head);
    await ackMessage(deps, refOf(o), { message_id: reserved.id });
  }
  assert.equal((await stored(pool, o.sessionId)).length, 0);
  assert.equal(await reserveNext(deps, refOf(o)), null, 'nothing left to deliver');
}

test('remove winning over reserve on the head: remove succeeds, reserve finds nothing, never delivered', async () => {
  for (let i = 0; i < ROUNDS; i++) {
    const { o, ids } = await queueOf(1);
    const head = ids[0] as string;
    const [remove, reserve] = await forced(
      o,
      () => removeMessage(deps, user(o), o.sessionId, { entry_id: head }),
      () => reserveNext(deps, refOf(o)),
    );
    assert.ok(remove.ok && reserve.ok);
    assert.equal(reserve.v, null);
    await checkRemoveVsReserve(o, head, true, null);
  }
});

test('reserve winning over remove on the head: remove is entry_not_found, delivered once, its ack deletes it', async () => {
  for (let i = 0; i < ROUNDS; i++) {
    const { o, ids } = await queueOf(1);
    const head = ids[0] as string;
    const [reserve, remove] = await forced(
      o,
      () => reserveNext(deps, refOf(o)),
      () => removeMessage(deps, user(o), o.sessionId, { entry_id: head }),
    );
    assert.ok(reserve.ok && reserve.v);
    assert.ok(!remove.ok && isAppError(remove.e, 'entry_not_found'));
    await checkRemoveVsReserve(o, head, false, reserve.v);
  }
});

test('remove and reserve released together by a barrier: always exactly one of them wins', async () => {
  for (let i = 0; i < ROUNDS * 2; i++) {
    const { o, ids } = await queueOf(1);
    const head = ids[0] as string;
    const wait = barrier(2);
    const [removed, reserved] = await Promise.all([
      wait().then(() =>
        removeMessage(deps, user(o), o.sessionId, { entry_id: head }).then(
          () => true,
          (e: unknown) => {
            assert.ok(isAppError(e, 'entry_not_found'));
            return false;
          },
        ),
      ),
      wait().then(() => reserveNext(deps, refOf(o))),
    ]);
    await checkRemoveVsReserve(o, head, removed, reserved);
  }
});

async function checkClearVsReserve(o: Owner, ids: string[], cleared: string[], delivered: { id: string } | null) {
  const deliveredIds = delivered ? [delivered.id] : [];
  assert.equal(cleared.length + deliveredIds.length, 5);
  assert.ok(!deliveredIds.some((id) => cleared.includes(id)), 'no row both removed and delivered');
  assert.deepEqual([...cleared, ...deliveredIds].sort(), [...ids].sort());
  if (delivered) {
    assert.equal(delivered.id, ids[0]);
    await ackMessage(deps, refOf(o), { message_id: delivered.id });
  }
  assert.equal((await stored(pool, o.sessionId)).length, 0);
}

test('Clear all vs reserve on a 5-row queue, each order forced: removed + delivered = 5, none in both', async () => {
  for (let i = 0; i < ROUNDS; i++) {
    for (const clearFirst of [true, false]) {
      const { o, ids } = await queueOf(5);
      const clear = () => clearMessages(deps, user(o), o.sessionId);
      const reserve = () => reserveNext(deps, refOf(o));
      const [x, y] = clearFirst ? await forced(o, clear, reserve) : await forced(o, reserve, clear);
      assert.ok(x.ok && y.ok);
      const cleared = (clearFirst ? x.v : y.v) as { entry_ids: string[] };
      const delivered = (clearFirst ? y.v : x.v) as { id: string } | null;
      assert.equal(delivered === null, clearFirst);
      await checkClearVsReserve(o, ids, cleared.entry_ids, delivered);
    }
  }
});

test('Clear all and reserve released together by a barrier on a 5-row queue: removed + delivered = 5', async () => {
  for (let i = 0; i < ROUNDS * 2; i++) {
    const { o, ids } = await queueOf(5);
    const wait = barrier(2);
    const [cleared, delivered] = await Promise.all([
      wait().then(() => clearMessages(deps, user(o), o.sessionId)),
      wait().then(() => reserveNext(deps, refOf(o))),
    ]);
    assert.equal(cleared.removed, cleared.entry_ids.length);
    await checkClearVsReserve(o, ids, cleared.entry_ids, delivered);
  }
});

test('two instances reserving one session’s head at once never both get it, and FIFO holds across acks', async () => {
  const second = createPool({ url, max: 8 });
  after(() => second.end());
  const other: MessageDeps = { db: second, capacity: new CapacitySetting({ db: second, envCapacity: 0 }) };
  for (let i = 0; i < ROUNDS; i++) {
    const { o, ids } = await queueOf(3);
    const handed: string[] = [];
    for (let round = 0; round < 3; round++) {
      const wait = barrier(8);
      const got = await Promise.all(
        Array.from({ length: 8 }, (_, k) => wait().then(() => reserveNext(k % 2 ? other : deps, refOf(o)))),
      );
      const winners = got.filter((m) => m !== null);
      assert.equal(winners.length, 1, `round ${round}: ${winners.length} reservations`);
      handed.push(winners[0]?.id ?? '');
      await ackMessage(deps, refOf(o), { message_id: winners[0]?.id ?? '' });
    }
    assert.deepEqual(handed, ids);
  }
});

async function instance(db: Pool): Promise<CapacitySetting> {
  const bus = new NotifyBus({ url });
  await bus.start();
  after(() => bus.stop());
  const capacity = new CapacitySetting({ db, envCapacity: null });
  await capacity.load();
  after(capacity.listen(bus));
  return capacity;
}

test('a stream closing on one instance while it reopens on another leaves the other’s delivery in flight', async () => {
  const { o } = await queueOf(1);
  await pool.query(`UPDATE mcp_sessions SET instance = 'a', stream_open = false WHERE id = $1`, [o.sessionId]);
  const message = await reserveNext(deps, refOf(o));
  assert.ok(message, 'the head is in flight');
  // Instance b opens the stream and holds the session's lock (as its reservation does),
  // not yet committed; meanwhile a's close of its old stream returns what is in flight.
  const gate = await pool.connect();
  try {
    await gate.query('BEGIN');
    await gate.query('SELECT 1 FROM queue_session_locks WHERE session_id = $1 FOR UPDATE', [o.sessionId]);
    await gate.query(`UPDATE mcp_sessions SET instance = 'b', stream_open = true WHERE id = $1`, [o.sessionId]);
    const returning = returnSessionToPending(deps, refOf(o), 'a');
    await until(async () => (await waiting()) === 1, 'the close to queue on the lock');
    await gate.query('COMMIT');
    assert.equal(await returning, 0, 'nothing of b’s returned');
  } finally {
    gate.release();
  }
  assert.deepEqual(
    (await stored(pool, o.sessionId)).map((m) => m.reserved_in_flight),
    [true],
    'the delivery stays in flight on b',
  );
});

test('two admins saving different capacities at once: persisted = live = the last write, on both instances', async () => {
  const second = createPool({ url, max: 4 });
  after(() => second.end());
  const a = await instance(racers);
  const b = await instance(second);
  for (let i = 0; i < ROUNDS * 2; i++) {
    const wait = barrier(2);
    const [x, y] = [7 + 2 * i, 8 + 2 * i];
    await Promise.all([
      wait().then(() => a.save({ max_per_session: x })),
      wait().then(() => b.save({ max_per_session: y })),
    ]);
    const persisted = await pool.query<{ value: { max_per_session: number } }>(
      `SELECT value FROM settings WHERE key = 'message_queue'`,
    );
    const last = persisted.rows[0]?.value.max_per_session;
    assert.ok(last === x || last === y);
    await until(
      async () => a.current().effective === last && b.current().effective === last,
      `both instances on ${last} (a ${a.current().effective}, b ${b.current().effective})`,
    );
    assert.equal(a.current().source, 'setting');
  }
});
