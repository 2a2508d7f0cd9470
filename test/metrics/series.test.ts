// Pins docs/metrics.md against the code: after the actions an agent and the sweeps really
// perform, every series the table documents appears in a scrape, with exactly its labels.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { setPolicy } from '../../src/budgets/service.js';
import { reaperSweep } from '../../src/sweeps/todos.js';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { startAwayFromNow } from '../helpers/windows.js';
import { agent, recordedRing, tool, verdictOf } from '../doorbell/world.js';
import { connect, fails, ok, vend } from '../mcp/harness.js';

const { pool, url } = await testDatabase('metrics_series');
const token = 't'.repeat(32);
const server = await startTestServer(url, 'metrics', { SWITCHBOARD_METRICS_TOKEN: token });
const { metrics } = server;
const app = { url: server.url };

/**
 * The documented series: name → label names, from the table in docs/metrics.md (`main`)
 * or from its Health section (pinned by test/metrics/health.test.ts).
 */
function documented(section: 'main' | 'health' = 'main'): Map<string, string[]> {
  const [main = '', health = ''] = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8').split(
    /^## Health$/m,
  );
  const doc = section === 'main' ? main : health;
  const rows = [...doc.matchAll(/^\| `(switchboard_[a-z_]+)` *\|[^|]*\|([^|]*)\|/gm)];
  return new Map(rows.map((m) => [m[1] ?? '', [...(m[2] ?? '').matchAll(/`([a-z_]+)`/g)].map((l) => l[1] ?? '')]));
}

/** Each series in a scrape → the label-name sets its samples carry. */
function scraped(text: string): Map<string, Set<string>> {
  const found = new Map<string, Set<string>>();
  for (const m of text.matchAll(/^([a-z_]+)(?:\{([^}]*)\})? \S+$/gm)) {
    const labels = [...(m[2] ?? '').matchAll(/([a-z_]+)="/g)].map((l) => l[1]).join(',');
    found.set(m[1] ?? '', (found.get(m[1] ?? '') ?? new Set()).add(labels));
    // A histogram is documented by its family name: its _count carries the family's labels.
    const family = /^(switchboard_[a-z_]+)_count$/.exec(m[1] ?? '')?.[1];
    if (family) found.set(family, (found.get(family) ?? new Set()).add(labels));
  }
  return found;
}

test('every documented series appears with its labels after the matching actions', async () => {
  const { humanId, endpoint, credential } = await vend(pool, { queues: ['inbox', 'budgeted'] });
  const agent = await connect(app.url, credential);
  const create = async (extra: Record<string, unknown> = {}) =>
    (await ok(agent, 'create_todo', { queue: 'inbox', title: 'work', ...extra })).todo.id as string;
  const [done, failed, released, lapsed] = [
    await create(),
    await create({ max_attempts: 1 }),
    await create(),
    await create(),
  ];
  await create();
  // Claimed once its ring is recorded, so the claim acknowledges it (doorbell delivery).
  await recordedRing(pool, done);
  await ok(agent, 'claim', { id: done });
  await ok(agent, 'complete', { id: done });
  await ok(agent, 'claim', { id: failed });
  await ok(agent, 'fail', { id: failed, error: 'no' });
  await ok(agent, 'claim', { id: released });
  await ok(agent, 'release', { id: released });
  await ok(agent, 'claim', { id: lapsed });
  await pool.query(`UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [lapsed]);
  await reaperSweep(pool, 1000, metrics).run();
  // A budget of one claim a day: one charged claim, then a refusal. The day starts half a
  // day from now, so no rollover empties the window while this file compares its series.
  await setPolicy({ db: pool }, { humanId, endpointId: null }, endpoint.id, 'budgeted', {
    max_claims_per_window: 1,
    window: { period: 'day', tz: 'UTC', start: startAwayFromNow('UTC', 'day') },
  });
  const budgeted = [await create({ queue: 'budgeted' }), await create({ queue: 'budgeted' })];
  await ok(agent, 'claim', { id: budgeted[0] });
  await fails(agent, 'claim', { id: budgeted[1] }, 'deferred');

  const res = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  assert.equal(res.status, 200);
  const text = await res.text();
  const found = scraped(text);
  const series = documented();
  assert.ok(series.size >= 10, 'the table in docs/metrics.md lists the series');
  for (const [name, labels] of series) {
    const sets = found.get(name);
    assert.ok(sets, `${name} is documented but not in the scrape`);
    assert.ok(
      sets.has(labels.join(',')),
      `${name}: documented labels {${labels.join(',')}}, scraped ${[...sets].join(' | ')}`,
    );
  }
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1]);
  assert.equal(value(/^switchboard_todos_created_total (\d+)$/m), 7);
  assert.equal(value(/^switchboard_todos_claimed_total\{queue="inbox"\} (\d+)$/m), 4);
  assert.equal(value(/^switchboard_todo_attempts_total (\d+)$/m), 5);
  assert.equal(value(/^switchboard_admission_charged_total\{queue="budgeted"\} (\d+)$/m), 1);
  assert.equal(value(/^switchboard_admission_refused_total\{queue="budgeted",reason="window_exhausted"\} (\d+)$/m), 1);
  assert.equal(
    value(
      new RegExp(`^switchboard_admission_window_used\\{endpoint="${endpoint.slug}",queue="budgeted"\\} (\\d+)$`, 'm'),
    ),
    1,
  );
  assert.equal(value(/^switchboard_todos_dead_lettered_total (\d+)$/m), 1);
  assert.equal(value(/^switchboard_lease_expirations_total (\d+)$/m), 1);
  const slug = endpoint.slug;
  const queueTodos = (state: string) =>
    value(new RegExp(`^switchboard_queue_todos\\{endpoint="${slug}",queue="inbox",state="${state}"\\} (\\d+)$`, 'm'));
  assert.equal(queueTodos('pending'), 3);
  assert.ok(value(/^switchboard_doorbell_rings_total\{kind="todo"\} (\d+)$/m) >= 1, 'the session heard rings');
  assert.equal(queueTodos('canceled'), 0);
});

test('a doorbell self-test, rung, claimed and reported, changes no series', async () => {
  const { credential } = await vend(pool, { queues: ['inbox'] });
  const listener = await agent(pool, app.url, credential, { name: 'claude-code', claimOnRing: true });
  const scrape = async () => {
    const res = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    // Ages grow with the clock: compared by series only, every other value exactly. The
    // health series (pool, event loop, sweeps) move with the process, not with todos; the
    // HTTP histogram times the requests this test makes itself, the self-test's too.
    return (await res.text())
      .split('\n')
      .filter(
        (l) =>
          l.startsWith('switchboard_') &&
          !health.has(/^[a-z_]+/.exec(l)?.[0] ?? '') &&
          !l.startsWith('switchboard_http_request_duration_seconds'),
      )
      .map((l) => (l.startsWith('switchboard_queue_oldest_pending_seconds') ? l.split(' ')[0] : l));
  };
  const health = new Set([...documented('health').keys()].flatMap((n) => [n, `${n}_bucket`, `${n}_sum`, `${n}_count`]));
  const before = await scrape();
  const start = await tool(listener, 'test_doorbell', {});
  const report = await verdictOf(() => tool(listener, 'get_doorbell_test', { test_id: start.test_id }));
  assert.equal(report.verdict, 'pass', 'the self-test really rang and was claimed');
  assert.deepEqual(await scrape(), before);
});
