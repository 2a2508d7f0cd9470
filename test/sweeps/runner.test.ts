// Pins the sweep runner: two instances share each tick slot (exactly one runs it, also
// after the interval changes), a failing sweep or database is counted and logged and never
// stops the loop, and stop() waits for the run in flight and starts nothing afterwards.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { createPool, type Pool } from '../../src/db/pool.js';
import { SweepRunner, type Sweep } from '../../src/sweeps/runner.js';
import { emptyDatabase, testDatabase } from '../helpers/db.js';

const INTERVAL_MS = 200;
const silent = pino({ level: 'silent' });

async function waitFor(what: string, condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The current slot of an INTERVAL_MS sweep by the database clock, as claimTick computes it. */
async function currentSlot(db: Pool): Promise<number> {
  const res = await db.query<{ slot: number }>(
    `SELECT floor(extract(epoch FROM clock_timestamp()) * 1000 / $1)::bigint AS slot`,
    [INTERVAL_MS],
  );
  return res.rows[0]?.slot ?? NaN;
}

test('two runners ticking one sweep together run each slot exactly once between them', async () => {
  const { url } = await testDatabase('runner_slots');
  const pools = [createPool({ url, max: 2 }), createPool({ url, max: 2 })];
  try {
    const runsBy: Record<string, number> = { a: 0, b: 0 };
    const runners = ['a', 'b'].map((id, i) => {
      const sweep: Sweep = { name: 'probe', intervalMs: INTERVAL_MS, run: async () => void (runsBy[id]! += 1) };
      return { id, sweep, runner: new SweepRunner({ db: pools[i]!, instanceId: id, log: silent, sweeps: [sweep] }) };
    });
    const won: Array<{ id: string; slot: number }> = [];
    // Slots both runners tried within: the database clock read the same slot before and
    // after the pair of ticks. Each of those must have been won once. (A loaded machine may
    // leave a slot with no try at all; that slot is no one's to run.)
    const tried = new Set<number>();
    // Both instances race every 25 ms for ~2 s: up to eight tries per 200 ms slot.
    const until = Date.now() + 2_000;
    while (Date.now() < until) {
      const before = await currentSlot(pools[0]!);
      const slots = await Promise.all(runners.map((r) => r.runner.tick(r.sweep)));
      if ((await currentSlot(pools[0]!)) === before) tried.add(before);
      slots.forEach((slot, i) => slot !== null && won.push({ id: runners[i]!.id, slot }));
      await sleep(25);
    }
    const slots = won.map((w) => w.slot).sort((x, y) => x - y);
    assert.equal(new Set(slots).size, slots.length, `a slot ran twice: ${JSON.stringify(won)}`);
    const missed = [...tried].filter((slot) => !slots.includes(slot));
    assert.deepEqual(missed, [], `slots both runners tried within and neither ran; ran: ${slots.join(',')}`);
    assert.ok(tried.size >= 3, `both runners tried within at least 3 slots: ${tried.size}`);
    assert.equal(runsBy.a! + runsBy.b!, slots.length, 'sweep.run was called once per won slot');
    for (const { id, runner } of runners) {
      const stats = runner.stats.get('probe');
      assert.equal(stats?.runs, runsBy[id]);
      assert.equal(stats?.errors, 0);
      assert.ok((stats?.skipped ?? 0) > 0, `${id} skipped slots the other had taken`);
    }
  } finally {
    await Promise.all(pools.map((p) => p.end()));
  }
});

test('two started runners on one database never run the sweep more often than slots pass', async () => {
  const { pool, url } = await testDatabase('runner_started');
  const pools = [createPool({ url, max: 2 }), createPool({ url, max: 2 })];
  let runs = 0;
  const sweep: Sweep = { name: 'probe_started', intervalMs: INTERVAL_MS, run: async () => void (runs += 1) };
  const runners = pools.map((db, i) => new SweepRunner({ db, instanceId: `inst-${i}`, log: silent, sweeps: [sweep] }));
  try {
    const first = await currentSlot(pool);
    runners.forEach((r) => r.start());
    await sleep(1_600);
    await Promise.all(runners.map((r) => r.stop()));
    const last = await currentSlot(pool);
    const stats = runners.map((r) => r.stats.get('probe_started')!);
    assert.equal(runs, stats[0]!.runs + stats[1]!.runs);
    assert.ok(runs <= last - first + 1, `${runs} runs over ${last - first + 1} slots`);
    assert.ok(runs >= 3, `the sweep ran on the shared ticks: ${runs} runs`);
    assert.ok(stats.every((s) => s.errors === 0));
  } finally {
    await Promise.all(runners.map((r) => r.stop()));
    await Promise.all(pools.map((p) => p.end()));
  }
});

test('a sweep that throws is counted in stats.errors and logged, and the runner keeps ticking', async () => {
  const { pool } = await testDatabase('runner_errors');
  const logged: Array<{ level: number; msg: string; sweep: string; err?: { message: string } }> = [];
  const log = pino({ level: 'error' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
  let calls = 0;
  const sweep: Sweep = {
    name: 'flaky',
    intervalMs: INTERVAL_MS,
    async run() {
      calls += 1;
      if (calls <= 2) throw new Error(`boom ${calls}`);
      return { done: 1 };
    },
  };
  const runner = new SweepRunner({ db: pool, instanceId: 'solo', log, sweeps: [sweep] });
  try {
    const direct = await runner.tick(sweep);
    assert.equal(direct, null, 'a failed run reports no slot and does not reject');
    runner.start();
    await waitFor('two runs after the failures', () => (runner.stats.get('flaky')?.runs ?? 0) >= 2);
  } finally {
    await runner.stop();
  }
  assert.equal(runner.stats.get('flaky')?.errors, 2);
  const failures = logged.filter((l) => l.msg.includes('sweep failed'));
  assert.equal(failures.length, 2);
  assert.deepEqual(
    failures.map((l) => [l.sweep, l.err?.message]),
    [
      ['flaky', 'boom 1'],
      ['flaky', 'boom 2'],
    ],
  );
});

test('a tick whose database fails is counted as an error and never rejects', async () => {
  // An unmigrated database: sweep_ticks does not exist, so every claim fails.
  const url = await emptyDatabase('runner_no_schema');
  const db = createPool({ url, max: 2 });
  let runs = 0;
  const sweep: Sweep = { name: 'orphan', intervalMs: INTERVAL_MS, run: async () => void (runs += 1) };
  const runner = new SweepRunner({ db, instanceId: 'solo', log: silent, sweeps: [sweep] });
  try {
    assert.equal(await runner.tick(sweep), null);
    runner.start();
    await waitFor('three failed ticks', () => (runner.stats.get('orphan')?.errors ?? 0) >= 3);
  } finally {
    await runner.stop();
    await db.end();
  }
  assert.equal(runs, 0);
  assert.equal(runner.stats.get('orphan')?.runs, 0);
});

test('stop() waits for the run in flight, and no run starts after stop', async () => {
  const { pool } = await testDatabase('runner_stop');
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let starts = 0;
  const sweep: Sweep = {
    name: 'slow',
    intervalMs: INTERVAL_MS,
    async run() {
      starts += 1;
      order.push('run started');
      if (starts === 1) await gate;
      order.push('run finished');
    },
  };
  const runner = new SweepRunner({ db: pool, instanceId: 'solo', log: silent, sweeps: [sweep] });
  runner.start();
  try {
    await waitFor('the first run to start', () => starts === 1);
    const stopped = runner.stop().then(() => order.push('stopped'));
    await sleep(3 * INTERVAL_MS);
    assert.deepEqual(order, ['run started'], 'stop() is still waiting for the run');
    release();
    await stopped;
    assert.deepEqual(order, ['run started', 'run finished', 'stopped']);
    await sleep(3 * INTERVAL_MS);
    assert.equal(starts, 1, 'no run started after stop');
    assert.equal(runner.stats.get('slow')?.runs, 1);
  } finally {
    release();
    await runner.stop();
  }
});

test('a sweep whose interval was raised keeps claiming ticks (a slot from the shorter interval does not block it)', async () => {
  const { pool } = await testDatabase('runner_resized');
  let runs = 0;
  const before: Sweep = { name: 'resized', intervalMs: INTERVAL_MS, run: async () => void (runs += 1) };
  // The same sweep after a restart with a five times longer interval (say the reaper
  // going from 30s to 150s): it must run again within about one new interval.
  const after: Sweep = { ...before, intervalMs: 5 * INTERVAL_MS };
  const runner = new SweepRunner({ db: pool, instanceId: 'solo', log: silent, sweeps: [before] });
  assert.notEqual(await runner.tick(before), null);
  let slot: number | null = null;
  const deadline = Date.now() + 3 * after.intervalMs;
  while (slot === null && Date.now() < deadline) {
    slot = await runner.tick(after);
    if (slot === null) await sleep(50);
  }
  const stored = await pool.query<{ slot: number }>(`SELECT slot FROM sweep_ticks WHERE name = 'resized'`);
  assert.notEqual(
    slot,
    null,
    `no tick won in ${3 * after.intervalMs} ms; sweep_ticks holds slot ${stored.rows[0]?.slot}`,
  );
  assert.equal(runs, 2);
});
