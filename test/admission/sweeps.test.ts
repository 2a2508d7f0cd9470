// Pins the admission sweeps and series (docs/design/admission.md): retention prunes
// windows older than 35 days and keeps the month the board shows; the scrape-time
// collector reports the policies, window usage, in-flight and deferred work from the
// database, and a failing read counts collection_errors_total{collector="admission"}
// without breaking the scrape.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createPool } from '../../src/db/pool.js';
import { ADMISSION } from '../../src/metrics/admission.js';
import { Metrics } from '../../src/metrics/index.js';
import { admissionSamples } from '../../src/metrics-reads.js';
import { markHeld } from '../../src/store/admission.js';
import { admissionRetentionSweep } from '../../src/sweeps/admission.js';
import { claimNext } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { budgeted, claimedTodo, DAY_UTC } from './fixtures.js';

const { pool, url } = await testDatabase('admission_sweeps');

test('retention prunes windows that started more than 35 days ago and keeps the rest', async () => {
  const w = await budgeted(pool);
  await w.budget('inbox', { max_claims_per_window: 5, window: DAY_UTC });
  await pool.query(
    `INSERT INTO admission_windows (policy_id, window_start, used)
     SELECT id, date_trunc('day', now()) - make_interval(days => d), d FROM admission_policies, unnest(ARRAY[1, 34, 36, 90]) d`,
  );
  const result = await admissionRetentionSweep(pool, 3_600_000).run();
  assert.deepEqual(result, { pruned_windows: 2 });
  const left = await pool.query<{ used: number }>(`SELECT used FROM admission_windows ORDER BY used`);
  assert.deepEqual(
    left.rows.map((r) => r.used),
    [1, 34],
  );
});

test('the collector reports policies, usage, in-flight and deferred work at scrape time', async () => {
  const metrics = new Metrics({ defaults: false });
  metrics.collect(ADMISSION, () => admissionSamples(pool));
  const w = await budgeted(pool, ['metered', 'paused']);
  await w.budget('metered', { max_in_flight: 4, max_claims_per_window: 1, window: DAY_UTC });
  await w.budget('paused', { max_in_flight: 0 });
  await w.push('metered');
  await w.push('metered');
  await w.push('paused');
  claimedTodo(await claimNext(w.deps, w.agent, { queue: 'metered' }));
  const text = await metrics.registry.metrics();
  assert.match(text, /^switchboard_admission_policies 3$/m);
  assert.match(text, /^switchboard_admission_window_used\{endpoint="agent-[0-9a-f]+",queue="metered"\} 1$/m);
  assert.match(text, /^switchboard_admission_window_limit\{endpoint="agent-[0-9a-f]+",queue="metered"\} 1$/m);
  assert.match(text, /^switchboard_admission_in_flight\{endpoint="agent-[0-9a-f]+",queue="metered"\} 1$/m);
  assert.match(
    text,
    /^switchboard_admission_deferred_todos\{endpoint="agent-[0-9a-f]+",queue="metered",reason="window_exhausted"\} 1$/m,
  );
  assert.match(
    text,
    /^switchboard_admission_deferred_todos\{endpoint="agent-[0-9a-f]+",queue="paused",reason="paused"\} 1$/m,
  );
});

test('a collector that cannot read counts a collection error and the scrape still answers', async () => {
  const metrics = new Metrics({ defaults: false });
  const broken = createPool({ url, max: 1 });
  await broken.end();
  metrics.collect(ADMISSION, () => admissionSamples(broken));
  const text = await metrics.registry.metrics();
  assert.match(text, /^switchboard_collection_errors_total\{collector="admission"\} 1$/m);
  assert.match(text, /switchboard_todos_claimed_total/);
});

test('a held mark decided on a window that has since rolled over is not written; one still current is, once', async () => {
  const w = await budgeted(pool, ['stale', 'current']);
  await w.budget('stale', { max_claims_per_window: 1, window: DAY_UTC });
  await w.budget('current', { max_claims_per_window: 1, window: DAY_UTC });
  const ids = await pool.query<{ id: string; queue: string }>(
    `SELECT id, queue FROM admission_policies WHERE queue IN ('stale', 'current') ORDER BY queue`,
  );
  const id = (queue: string) => ids.rows.find((r) => r.queue === queue)?.id ?? '';
  const past = new Date(Date.now() - 1000).toISOString();
  const future = new Date(Date.now() + 3_600_000).toISOString();
  await markHeld(pool, [
    { policyId: id('stale'), until: past },
    { policyId: id('current'), until: future },
  ]);
  const heldAt = async () =>
    (
      await pool.query<{ queue: string; held_at: Date | null }>(
        `SELECT queue, held_at FROM admission_policies WHERE id = ANY($1::uuid[]) ORDER BY queue`,
        [[id('stale'), id('current')]],
      )
    ).rows;
  const first = await heldAt();
  assert.deepEqual(
    first.map((r) => [r.queue, r.held_at !== null]),
    [
      ['current', true],
      ['stale', false],
    ],
  );
  // A mark with no end (an in-flight deferral ends when a claim settles) is written; an
  // existing mark keeps its instant.
  await markHeld(pool, [
    { policyId: id('stale'), until: null },
    { policyId: id('current'), until: null },
  ]);
  const second = await heldAt();
  assert.ok(second.every((r) => r.held_at !== null));
  assert.equal(second[0]?.held_at?.getTime(), first[0]?.held_at?.getTime());
});
