// Pins the LISTEN/NOTIFY bus: todo_ready fires on commit only, once per queue per
// transaction, and the bus survives its connection being killed (reconnect, re-poll).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NotifyBus, decodeEvent, notifySql, type BusEvent } from '../../src/db/bus.js';
import type { Pool } from '../../src/db/pool.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { depsOf, makeEndpoint } from '../helpers/fixtures.js';

// Quick retries so a reconnect takes milliseconds, not the production 100 ms–5 s.
const BACKOFF = { initialMs: 20, maxMs: 200 };

async function waitFor(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** A started bus recording every todo_ready; stopped when fn ends. */
async function withBus(
  url: string,
  fn: (bus: NotifyBus, events: BusEvent<'todo_ready'>[]) => Promise<void>,
): Promise<void> {
  const bus = new NotifyBus({ url, backoff: BACKOFF });
  const events: BusEvent<'todo_ready'>[] = [];
  bus.subscribe('todo_ready', (event) => events.push(event));
  await bus.start();
  try {
    await fn(bus, events);
  } finally {
    await bus.stop();
  }
}

function on(events: BusEvent<'todo_ready'>[], endpointId: string, queue: string): BusEvent<'todo_ready'>[] {
  return events.filter((e) => e.endpoint_id === endpointId && e.queue === queue);
}

/** Commits a todo on `queue` and waits for its notice: everything committed earlier has arrived. */
async function commitMarker(
  pool: Pool,
  endpointId: string,
  events: BusEvent<'todo_ready'>[],
  queue = 'marker',
): Promise<void> {
  const before = on(events, endpointId, queue).length;
  await createTodo(depsOf(pool), { endpointId }, { humanId: 'hu_test' }, { queue, title: 'marker' });
  await waitFor(`todo_ready on ${queue}`, () => on(events, endpointId, queue).length > before);
}

/** Runs fn in one transaction; createTodo only calls db.query, so a transaction client serves as its pool. */
async function inTransaction(pool: Pool, end: 'COMMIT' | 'ROLLBACK', fn: (db: Pool) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await fn(client as unknown as Pool);
    await client.query(end);
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

test('a committed createTodo reaches the bus as todo_ready and a rolled-back one never does', async () => {
  const { pool, url } = await testDatabase('bus_commit');
  const endpoint = await makeEndpoint(pool, { queues: ['inbox', 'ghost', 'marker'] });
  await withBus(url, async (_bus, events) => {
    await createTodo(
      depsOf(pool),
      { endpointId: endpoint.id },
      { humanId: 'hu_test' },
      { queue: 'inbox', title: 'one' },
    );
    await waitFor('todo_ready on inbox', () => on(events, endpoint.id, 'inbox').length === 1);
    assert.deepEqual(on(events, endpoint.id, 'inbox')[0], {
      type: 'todo_ready',
      endpoint_id: endpoint.id,
      queue: 'inbox',
    });

    await inTransaction(pool, 'ROLLBACK', async (db) => {
      await createTodo(
        depsOf(db),
        { endpointId: endpoint.id },
        { humanId: 'hu_test' },
        { queue: 'ghost', title: 'never' },
      );
    });
    // Notices arrive in commit order on one connection: once the marker is in, a notice
    // from the rolled-back transaction would have been too.
    await commitMarker(pool, endpoint.id, events);
    assert.equal(on(events, endpoint.id, 'ghost').length, 0);
    const ghosts = await pool.query(`SELECT 1 FROM todos WHERE queue = 'ghost'`);
    assert.equal(ghosts.rowCount, 0);
  });
});

test('five todos created in one transaction on one queue produce one todo_ready', async () => {
  const { pool, url } = await testDatabase('bus_coalesce');
  const endpoint = await makeEndpoint(pool, { queues: ['inbox', 'batch', 'marker'] });
  await withBus(url, async (_bus, events) => {
    await inTransaction(pool, 'COMMIT', async (db) => {
      for (let i = 0; i < 5; i++) {
        await createTodo(
          depsOf(db),
          { endpointId: endpoint.id },
          { humanId: 'hu_test' },
          { queue: 'batch', title: `t${i}` },
        );
      }
    });
    await commitMarker(pool, endpoint.id, events);
    assert.equal(on(events, endpoint.id, 'batch').length, 1);
    const created = await pool.query(`SELECT 1 FROM todos WHERE queue = 'batch'`);
    assert.equal(created.rowCount, 5);
  });
});

test('after its LISTEN connection is terminated the bus reconnects, asks subscribers to re-poll, and hears again', async () => {
  const { pool, url } = await testDatabase('bus_reconnect');
  const endpoint = await makeEndpoint(pool);
  await withBus(url, async (bus, events) => {
    let repolls = 0;
    bus.onReconnect(() => (repolls += 1));
    assert.equal(bus.connections, 1);
    assert.equal(bus.listening, true);
    const listener = async () =>
      (
        await pool.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE application_name = 'switchboard-listen' AND datname = current_database()`,
        )
      ).rows.map((r) => r.pid);
    const [before] = await listener();
    assert.ok(before, 'the LISTEN connection is visible in pg_stat_activity');

    const killed = await pool.query<{ ok: boolean }>('SELECT pg_terminate_backend($1::int) AS ok', [before]);
    assert.equal(killed.rows[0]?.ok, true);
    await waitFor('the bus to reconnect', () => bus.connections === 2 && repolls === 1);
    assert.equal(bus.listening, true);
    let after: number[] = [];
    await waitFor('one new LISTEN connection', async () => {
      after = await listener();
      return after.length === 1 && after[0] !== before;
    });

    await createTodo(
      depsOf(pool),
      { endpointId: endpoint.id },
      { humanId: 'hu_test' },
      { queue: 'inbox', title: 'after' },
    );
    await waitFor('todo_ready after the reconnect', () => on(events, endpoint.id, 'inbox').length === 1);
  });
});

test('a payload outside the event union is dropped before any subscriber sees it', () => {
  assert.deepEqual(decodeEvent('{"type":"todo_ready","endpoint_id":"ep_1","queue":"inbox"}'), {
    type: 'todo_ready',
    endpoint_id: 'ep_1',
    queue: 'inbox',
  });
  for (const payload of [
    'not json',
    'null',
    '"todo_ready"',
    '{"type":"no_such_event","endpoint_id":"ep_1"}',
    '{"type":"todo_ready","endpoint_id":"ep_1"}',
    '{"type":"ring","instance":"i","endpoint_id":"ep_1","session_id":7}',
    '{"type":"toString"}',
  ]) {
    assert.equal(decodeEvent(payload), null, payload);
  }
});

test('notifySql builds the pg_notify of one event from SQL expressions', () => {
  assert.equal(
    notifySql('session_closed', { endpoint_id: 'r.endpoint_id', session_id: 'r.id' }),
    `pg_notify('switchboard', json_build_object('type', 'session_closed', 'endpoint_id', r.endpoint_id, 'session_id', r.id)::text)`,
  );
});
