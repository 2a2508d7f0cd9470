// Pins the schedule tick (docs/design/schedules.md, "The tick"): two tick runners on
// separate pools, released together at each of several boundaries, make exactly one todo
// per occurrence; after downtime one todo and the missed count; paused schedules make
// nothing and resume without a burst; a revoked endpoint gets no todo and says why.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { pino } from 'pino';
import { createPool } from '../../src/db/pool.js';
import { revokeEndpoint } from '../../src/endpoints/manage.js';
import { createSchedule, patchSchedule, showSchedule } from '../../src/schedules/manage.js';
import { runScheduleTick, type TickDeps } from '../../src/schedules/tick.js';
import { testDatabase } from '../helpers/db.js';
import { barrier } from '../helpers/fixtures.js';
import { vend } from '../mcp/harness.js';

const { pool, url } = await testDatabase('schedule_tick');
const other = createPool({ url, max: 5 });
after(() => other.end());

const deps = { db: pool, publicUrl: 'http://switchboard.test' };
const log = pino({ level: 'silent' });
const T0 = new Date('2026-06-01T10:00:00Z');
const minutes = (n: number, seconds = 0) => new Date(T0.getTime() + n * 60_000 + seconds * 1000);

function runner(p: typeof pool, clock: () => Date): TickDeps {
  return { pool: p, defaultLeaseSeconds: 300, log, clock };
}

/** Pauses the schedules earlier tests left, so each test's ticks count only its own. */
async function quiet(): Promise<void> {
  await pool.query(`UPDATE schedules SET paused = true, next_run_at = NULL`);
}

async function todosOf(scheduleId: string) {
  const res = await pool.query<{ id: string; idempotency_key: string; source: string; queue: string; title: string }>(
    `SELECT id, idempotency_key, source, queue, title FROM todos WHERE idempotency_key LIKE $1 ORDER BY id`,
    [`schedule:${scheduleId}:%`],
  );
  return res.rows;
}

test('two runners ticking together over six boundaries make exactly one todo per occurrence', async () => {
  await quiet();
  const mine = await vend(pool, { queues: ['inbox', 'batch'] });
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const { schedule } = await createSchedule(
      deps,
      mine.humanId,
      mine.endpoint.slug,
      { queue: 'batch', cron: '*/5 * * * *', tz: 'Europe/Berlin', title: `report ${i}`, kind: 'report' },
      T0,
    );
    assert.equal(schedule.next_run_at?.toISOString(), '2026-06-01T10:05:00.000Z');
    ids.push(schedule.id);
  }
  for (let round = 1; round <= 6; round++) {
    const now = minutes(5 * round, 1);
    const gate = barrier(4);
    const ticks = [pool, other, pool, other].map(async (p) => {
      await gate();
      return runScheduleTick(runner(p, () => now));
    });
    const counts = await Promise.all(ticks);
    assert.equal(
      counts.reduce((n, c) => n + c.fired, 0),
      ids.length,
      `round ${round}: one firing per schedule across all runners`,
    );
    assert.equal(
      counts.reduce((n, c) => n + c.missed, 0),
      0,
    );
  }
  for (const id of ids) {
    const todos = await todosOf(id);
    const expected = [5, 10, 15, 20, 25, 30].map(
      (m) => `schedule:${id}:${minutes(m).toISOString().replace('.000', '')}`,
    );
    assert.deepEqual(
      todos.map((t) => t.idempotency_key),
      expected,
    );
    assert.ok(todos.every((t) => t.source === 'schedule' && t.queue === 'batch'));
  }
  const { schedule } = await showSchedule(deps, mine.humanId, mine.endpoint.slug, ids[0] ?? '');
  assert.equal(schedule.next_run_at?.toISOString(), minutes(35).toISOString());
  assert.equal(schedule.last_run_at?.toISOString(), minutes(30).toISOString());
  assert.equal(schedule.last_missed, 0);

  // Downtime: the clock jumps two hours. One todo, for the latest occurrence, and the count.
  const late = minutes(150, 1);
  const [a, b] = await Promise.all([
    runScheduleTick(runner(pool, () => late)),
    runScheduleTick(runner(other, () => late)),
  ]);
  assert.equal((a?.fired ?? 0) + (b?.fired ?? 0), ids.length);
  for (const id of ids) {
    const todos = await todosOf(id);
    assert.equal(todos.length, 7, 'one more todo, not a burst');
    assert.equal(todos.at(-1)?.idempotency_key, `schedule:${id}:2026-06-01T12:30:00Z`);
    const shown = await showSchedule(deps, mine.humanId, mine.endpoint.slug, id);
    assert.equal(shown.schedule.last_missed, 23, '10:35 … 12:25 were missed');
    assert.equal(shown.schedule.last_todo_id, todos.at(-1)?.id);
    assert.equal(shown.schedule.next_run_at?.toISOString(), '2026-06-01T12:35:00.000Z');
  }
  // Nothing is due any more at that instant: a third runner makes nothing.
  assert.equal((await runScheduleTick(runner(pool, () => late))).fired, 0);
});

test('by the database clock: a schedule moved into the past in SQL fires once with its template', async () => {
  await quiet();
  const mine = await vend(pool, { queues: ['inbox'] });
  const { schedule } = await createSchedule(
    deps,
    mine.humanId,
    mine.endpoint.slug,
    { queue: 'inbox', cron: '0 9 * * 1-5', tz: 'UTC', title: 'standup', body: 'notes', payload: { team: 'a' } },
    new Date(),
  );
  await pool.query(`UPDATE schedules SET next_run_at = now() - interval '10 seconds' WHERE id = $1`, [schedule.id]);
  const counts = await runScheduleTick({ pool, defaultLeaseSeconds: 300, log });
  assert.equal(counts.fired, 1);
  const todo = await pool.query(
    `SELECT title, body, payload, source, state, created_by_human_id FROM todos WHERE endpoint_id = $1`,
    [mine.endpoint.id],
  );
  assert.deepEqual(todo.rows, [
    {
      title: 'standup',
      body: 'notes',
      payload: { team: 'a' },
      source: 'schedule',
      state: 'pending',
      created_by_human_id: mine.humanId,
    },
  ]);
  const shown = await showSchedule(deps, mine.humanId, mine.endpoint.slug, schedule.id);
  assert.ok((shown.schedule.next_run_at?.getTime() ?? 0) > Date.now(), 'the next run is in the future');
});

test('a paused schedule makes nothing, and resuming counts from now without a burst', async () => {
  await quiet();
  const mine = await vend(pool);
  const { schedule } = await createSchedule(
    deps,
    mine.humanId,
    mine.endpoint.slug,
    { queue: 'inbox', cron: '0 * * * *', tz: 'UTC', title: 'hourly' },
    T0,
  );
  const paused = await patchSchedule(deps, mine.humanId, mine.endpoint.slug, schedule.id, { paused: true }, T0);
  assert.equal(paused.schedule.paused, true);
  assert.equal(paused.schedule.next_run_at, null);
  assert.equal((await runScheduleTick(runner(pool, () => minutes(600)))).fired, 0);
  assert.equal((await todosOf(schedule.id)).length, 0);

  const resumed = await patchSchedule(
    deps,
    mine.humanId,
    mine.endpoint.slug,
    schedule.id,
    { paused: false },
    minutes(600, 5),
  );
  assert.equal(resumed.schedule.next_run_at?.toISOString(), minutes(660).toISOString(), 'from now, not from the pause');
  assert.equal((await runScheduleTick(runner(pool, () => minutes(600, 6)))).fired, 0);
  const fired = await runScheduleTick(runner(pool, () => minutes(660, 1)));
  assert.deepEqual(fired, { fired: 1, missed: 0, failed: 0 });
  const audit = await showSchedule(deps, mine.humanId, mine.endpoint.slug, schedule.id);
  assert.deepEqual(
    audit.audit.map((r) => r.action),
    ['resume', 'pause', 'create'],
  );
});

test('a revoked endpoint gets no todo; the schedule says why and moves on', async () => {
  await quiet();
  const mine = await vend(pool);
  const { schedule } = await createSchedule(
    deps,
    mine.humanId,
    mine.endpoint.slug,
    { queue: 'inbox', cron: '*/10 * * * *', tz: 'UTC', title: 'ping' },
    T0,
  );
  await revokeEndpoint(deps, mine.humanId, mine.endpoint.slug, new Date());
  const counts = await runScheduleTick(runner(pool, () => minutes(10, 1)));
  assert.equal(counts.fired, 0);
  assert.equal(counts.failed, 1);
  const shown = await showSchedule(deps, mine.humanId, mine.endpoint.slug, schedule.id);
  assert.match(shown.schedule.last_error ?? '', /revoked or expired/);
  assert.equal(shown.schedule.next_run_at?.toISOString(), minutes(20).toISOString());
  assert.equal((await todosOf(schedule.id)).length, 0);
});

test('a schedule’s todo carries its priority, its schedule_id and its creator', async () => {
  await quiet();
  const mine = await vend(pool);
  const { schedule } = await createSchedule(
    deps,
    mine.humanId,
    mine.endpoint.slug,
    { queue: 'inbox', cron: '*/5 * * * *', tz: 'UTC', title: 'urgent', priority: 80 },
    T0,
  );
  assert.deepEqual(await runScheduleTick(runner(pool, () => minutes(5, 1))), { fired: 1, missed: 0, failed: 0 });
  const made = await pool.query<{ priority: number; schedule_id: string; source: string; created_by_human_id: string }>(
    `SELECT priority, schedule_id, source, created_by_human_id FROM todos WHERE idempotency_key LIKE $1`,
    [`schedule:${schedule.id}:%`],
  );
  assert.deepEqual(made.rows, [
    { priority: 80, schedule_id: schedule.id, source: 'schedule', created_by_human_id: mine.humanId },
  ]);
});
