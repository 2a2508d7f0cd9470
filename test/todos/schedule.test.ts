// Pins not_before: a scheduled todo is unclaimable, unrung and out of the ready counts
// until a promotion makes it ready; it is promoted exactly once however many instances
// race, rings once after, survives a restart, and a todo_scheduled notice re-arms the
// timer of every instance. Time is moved in SQL (not_before back-dated).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import { NotifyBus } from '../../src/db/bus.js';
import { createPool, type Pool } from '../../src/db/pool.js';
import { claimRings } from '../../src/store/rings.js';
import { stateCounts } from '../../src/store/todo-counts.js';
import { promoteDue } from '../../src/store/todo-schedule.js';
import { claim, claimNext, createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, barrier, depsOf, makeEndpoint } from '../helpers/fixtures.js';
import { testServices } from '../helpers/services.js';
import { caught, claimed, rowOf } from './world.js';

const HOUR_AHEAD = () => new Date(Date.now() + 3_600_000).toISOString();

async function setup(label: string) {
  const db = await testDatabase(label);
  const endpoint = await makeEndpoint(db.pool);
  const create = (input: Record<string, unknown>) =>
    createTodo(
      depsOf(db.pool),
      { endpointId: endpoint.id },
      { humanId: endpoint.human_id },
      { queue: 'inbox', title: 't', ...input },
    );
  return { ...db, endpoint, create };
}

/** Makes every scheduled todo due: its not_before a second ago. */
async function makeDue(pool: Pool): Promise<void> {
  await pool.query(
    `UPDATE todos SET not_before = now() - interval '1 second' WHERE ready_at IS NULL AND NOT synthetic`,
  );
}

async function counts(pool: Pool, endpointId: string): Promise<Record<string, number>> {
  return Object.fromEntries((await stateCounts(pool, [endpointId])).map((c) => [c.state, c.count]));
}

async function ring(pool: Pool, endpointId: string): Promise<string[]> {
  const rung = await claimRings(pool, {
    endpointId,
    maxRings: 6,
    limit: 16,
    reason: { kind: 'ready', queue: 'inbox' },
  });
  return rung.map((r) => r.id);
}

test('a scheduled todo is unclaimable, unrung and not counted ready until promoted; then it rings once and is claimed', async () => {
  const { pool, endpoint, create } = await setup('sched_life');
  await pool.query(
    `INSERT INTO mcp_sessions (endpoint_id, id, instance, stream_open, channel) VALUES ($1, 'ms_live', 'i-live', true, true)`,
    [endpoint.id],
  );
  const { todo } = await create({ not_before: HOUR_AHEAD() });
  assert.equal(todo.state, 'pending');
  assert.ok(todo.not_before instanceof Date);
  assert.equal((await rowOf(pool, todo.id)).ready_at, null);

  const agent = agentOf(endpoint, 'worker');
  assert.deepEqual(await claimNext(depsOf(pool), agent, {}), { empty: true });
  await caught(claim(depsOf(pool), agent, { id: todo.id }), 'conflict');
  assert.deepEqual(await ring(pool, endpoint.id), []);
  assert.deepEqual(await counts(pool, endpoint.id), { scheduled: 1 });
  assert.equal(await promoteDue(pool, 500), 0, 'nothing is due yet');

  await makeDue(pool);
  assert.equal(await promoteDue(pool, 500), 1);
  const row = await rowOf(pool, todo.id);
  assert.deepEqual(row.ready_at, row.not_before, 'its place in line is the instant it was due');
  assert.deepEqual(await counts(pool, endpoint.id), { pending: 1 });
  assert.deepEqual(await ring(pool, endpoint.id), [todo.id], 'rung like a new todo');
  assert.deepEqual(await ring(pool, endpoint.id), [], 'and only once');
  assert.equal(claimed(await claimNext(depsOf(pool), agent, {})).id, todo.id);
  assert.deepEqual(await counts(pool, endpoint.id), { claimed: 1 });
});

test('a not_before in the past or now is ready at once', async () => {
  const { pool, endpoint, create } = await setup('sched_past');
  const { todo } = await create({ not_before: new Date(Date.now() - 60_000).toISOString() });
  assert.notEqual((await rowOf(pool, todo.id)).ready_at, null);
  assert.equal(claimed(await claimNext(depsOf(pool), agentOf(endpoint), {})).id, todo.id);
});

test('two promoters racing over 300 due todos promote each exactly once, announcing each queue', async () => {
  const { pool, url, endpoint, create } = await setup('sched_race');
  for (let i = 0; i < 300; i++) await create({ title: `s${i}`, not_before: HOUR_AHEAD() });
  await makeDue(pool);
  const listener = new pg.Client({ connectionString: url });
  await listener.connect();
  const notices: string[] = [];
  listener.on('notification', (n) => notices.push(n.payload ?? ''));
  await listener.query('LISTEN switchboard');
  const pools = [createPool({ url, max: 1 }), createPool({ url, max: 1 })];
  try {
    const wait = barrier(2);
    const promoted = await Promise.all(
      pools.map(async (p) => {
        await wait();
        let n = 0;
        for (let got = -1; got !== 0; n += got) got = await promoteDue(p, 50);
        return n;
      }),
    );
    assert.equal(promoted[0]! + promoted[1]!, 300, `promoted ${promoted.join(' + ')}`);
    const never = await pool.query(`SELECT count(*)::int AS n FROM todos WHERE ready_at IS DISTINCT FROM not_before`);
    assert.equal(never.rows[0].n, 0);
    assert.deepEqual(await counts(pool, endpoint.id), { pending: 300 });
    await listener.query('SELECT 1'); // notifications arrive before this answer on the same connection
    const ready = notices
      .map((p) => JSON.parse(p) as { type: string; queue?: string })
      .filter((e) => e.type === 'todo_ready');
    assert.ok(ready.length >= 1 && ready.every((e) => e.queue === 'inbox'), JSON.stringify(ready));
  } finally {
    await Promise.all(pools.map((p) => p.end()));
    await listener.end();
  }
});

test('a todo scheduled before a restart is promoted by the next instance when it starts', async () => {
  const { pool, endpoint, create } = await setup('sched_restart');
  const first = await testServices({ pool });
  first.start();
  const { todo } = await create({ not_before: HOUR_AHEAD() });
  await first.stop();
  await makeDue(pool);
  const second = await testServices({ pool, instanceId: 'second' });
  second.start();
  try {
    await second.promoter.settle();
    await until(async () => (await rowOf(pool, todo.id)).ready_at !== null);
    assert.equal(claimed(await claimNext(depsOf(pool), agentOf(endpoint), {})).id, todo.id);
  } finally {
    await second.stop();
  }
});

test('a todo_scheduled notice arms every instance: a todo due in 2 s is promoted by the timer, no sweep', async () => {
  const { pool, url, endpoint, create } = await setup('sched_timer');
  const bus = new NotifyBus({ url });
  await bus.start();
  const services = await testServices({ pool, bus });
  services.start();
  try {
    await services.promoter.settle();
    // Due far enough ahead that a slow create (a loaded machine) still reads it unpromoted.
    const { todo } = await create({ not_before: new Date(Date.now() + 2_000).toISOString() });
    assert.equal((await rowOf(pool, todo.id)).ready_at, null);
    await until(async () => (await rowOf(pool, todo.id)).ready_at !== null);
    assert.equal(claimed(await claimNext(depsOf(pool), agentOf(endpoint), {})).id, todo.id);
  } finally {
    await services.stop();
    await bus.stop();
  }
});

async function until(check: () => Promise<boolean>, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
