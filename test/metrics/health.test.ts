// Pins the Health section of docs/metrics.md: every series it documents is scraped with its
// labels, and each moves with what it describes — the pool, a sweep tick, an MCP stream
// opened and closed, a long-poll wait, the build, each sweep's interval.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { pino } from 'pino';
import { Metrics } from '../../src/metrics/index.js';
import { SweepRunner, type Sweep } from '../../src/sweeps/runner.js';
import { versionInfo } from '../../src/version.js';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { connect, ok, vend } from '../mcp/harness.js';

const { pool, url } = await testDatabase('metrics_health');
const server = await startTestServer(url, 'health');

async function scrape(): Promise<string> {
  const res = await fetch(`${server.url}/metrics`);
  assert.equal(res.status, 200);
  return res.text();
}

/** A sample's value in a scrape (`series` with its labels, exactly as printed); NaN when absent. */
function valueOf(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? NaN : Number(line.slice(series.length + 1));
}

/** Waits, scraping, until `series` reads `want` (gives up after a generous deadline). */
async function until(series: string, want: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const seen = valueOf(await scrape(), series);
    if (seen === want) return;
    if (Date.now() > deadline) assert.fail(`${series} stayed ${seen}, never ${want}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The Health table's series: name → label names. */
function documentedHealth(): Map<string, string[]> {
  const doc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8').split(/^## Health$/m)[1] ?? '';
  const rows = [...doc.matchAll(/^\| `(switchboard_[a-z_]+)` *\|[^|]*\|([^|]*)\|/gm)];
  return new Map(rows.map((m) => [m[1] ?? '', [...(m[2] ?? '').matchAll(/`([a-z_]+)`/g)].map((l) => l[1] ?? '')]));
}

/** A sweep of its own, ticked by a runner reporting to the server's registry. */
async function tickProbe(name: string): Promise<void> {
  const sweep: Sweep = { name, intervalMs: 60_000, run: async () => undefined };
  const runner = new SweepRunner({
    db: pool,
    instanceId: 'health-probe',
    log: pino({ level: 'silent' }),
    sweeps: [sweep],
    metrics: server.metrics.health.sweeps,
  });
  assert.notEqual(await runner.tick(sweep), null, 'the probe won its slot');
}

test('every series of the Health section is scraped with its documented labels', async () => {
  await tickProbe('health_documented');
  const text = await scrape();
  const health = documentedHealth();
  assert.equal(health.size, 8, 'the Health table lists its eight series');
  for (const [name, labels] of health) {
    const samples = [...text.matchAll(new RegExp(`^${name}(?:_bucket|_sum|_count)?(?:\\{([^}]*)\\})? \\S+$`, 'gm'))];
    assert.ok(samples.length > 0, `${name} is documented but not in the scrape`);
    const sets = new Set(
      samples.map((m) =>
        [...(m[1] ?? '').matchAll(/([a-z_]+)="/g)]
          .map((l) => l[1])
          .filter((l) => l !== 'le')
          .join(','),
      ),
    );
    assert.ok(
      sets.has(labels.join(',')),
      `${name}: documented {${labels.join(',')}}, scraped ${[...sets].join(' | ')}`,
    );
  }
});

test('the pool gauges count this instance’s connections, and the event loop lag is a duration', async () => {
  const text = await scrape();
  const total = valueOf(text, 'switchboard_db_pool_connections{state="total"}');
  const idle = valueOf(text, 'switchboard_db_pool_connections{state="idle"}');
  assert.ok(total >= 1, `a serving instance holds a connection (total ${total})`);
  assert.ok(total <= 4, 'no more than SWITCHBOARD_DB_POOL_SIZE');
  assert.ok(idle >= 0 && idle <= total);
  assert.ok(valueOf(text, 'switchboard_db_pool_connections{state="waiting"}') >= 0);
  const lag = valueOf(text, 'switchboard_event_loop_lag_seconds');
  assert.ok(Number.isFinite(lag) && lag >= 0, `lag ${lag}`);
});

test('a successful sweep tick stamps its last success and counts into the tick histogram', async () => {
  const name = 'health_probe';
  const count = `switchboard_sweep_tick_seconds_count{sweep="${name}"}`;
  const stamp = `switchboard_sweep_last_success_timestamp_seconds{sweep="${name}"}`;
  const first = await scrape();
  assert.ok(Number.isNaN(valueOf(first, stamp)), 'no success before the first tick');
  const before = Date.now() / 1000;
  await tickProbe(name);
  const after = await scrape();
  assert.equal(valueOf(after, count), 1);
  assert.ok(valueOf(after, stamp) >= before, 'stamped at or after the tick began');
  assert.ok(valueOf(after, `switchboard_sweep_tick_seconds_bucket{le="+Inf",sweep="${name}"}`) === 1);
});

test('a failing sweep tick is timed but stamps no success', async () => {
  const name = 'health_failing';
  const sweep: Sweep = {
    name,
    intervalMs: 60_000,
    run: () => Promise.reject(new Error('the probe fails')),
  };
  const runner = new SweepRunner({
    db: pool,
    instanceId: 'health-probe',
    log: pino({ level: 'silent' }),
    sweeps: [sweep],
    metrics: server.metrics.health.sweeps,
  });
  await runner.tick(sweep);
  const text = await scrape();
  assert.equal(valueOf(text, `switchboard_sweep_tick_seconds_count{sweep="${name}"}`), 1);
  assert.ok(Number.isNaN(valueOf(text, `switchboard_sweep_last_success_timestamp_seconds{sweep="${name}"}`)));
  // Its interval is served from the runner's construction, success or not: the stalled-sweep
  // alert needs it for a sweep that never succeeded.
  assert.equal(valueOf(text, `switchboard_sweep_interval_seconds{sweep="${name}"}`), 60);
});

test('an MCP client’s notification stream counts 1 while open and 0 once closed', async () => {
  await until('switchboard_open_streams', 0);
  const { credential } = await vend(pool, { queues: ['inbox'] });
  const agent = await connect(server.url, credential);
  await until('switchboard_open_streams', 1);
  await agent.client.close();
  await until('switchboard_open_streams', 0);
});

test('a claim_next waiting for work counts 1 until work wakes it', async () => {
  const { credential } = await vend(pool, { queues: ['inbox'] });
  const waiter = await connect(server.url, credential, 'waiter');
  const maker = await connect(server.url, credential, 'maker');
  assert.equal(valueOf(await scrape(), 'switchboard_waiting_long_polls'), 0);
  const waiting = ok(waiter, 'claim_next', { wait_seconds: 30 });
  await until('switchboard_waiting_long_polls', 1);
  await ok(maker, 'create_todo', { queue: 'inbox', title: 'wake up' });
  const claimed = await waiting;
  assert.equal(claimed.todo.title, 'wake up');
  await until('switchboard_waiting_long_polls', 0);
});

test('build_info is 1, labelled with the package version and the Node.js version', async () => {
  const series = `switchboard_build_info{version="${versionInfo().version}",node="${process.version}"}`;
  assert.equal(valueOf(await scrape(), series), 1);
});

test('a health read that throws or answers no number leaves its series out, and the scrape still answers', async () => {
  const metrics = new Metrics({ defaults: false });
  const text = async () => metrics.registry.metrics();
  assert.doesNotMatch(await text(), /^switchboard_open_streams /m, 'left out until the reads are given');
  metrics.health.read({
    pool: () => ({ total: Number.NaN, idle: 1, waiting: 0 }),
    openStreams: () => {
      throw new Error('the stream count broke');
    },
    waitingLongPolls: () => 2,
  });
  const scraped = await text();
  assert.doesNotMatch(scraped, /^switchboard_open_streams /m);
  assert.doesNotMatch(scraped, /^switchboard_db_pool_connections\{state="total"\}/m);
  assert.equal(valueOf(scraped, 'switchboard_db_pool_connections{state="idle"}'), 1);
  assert.equal(valueOf(scraped, 'switchboard_waiting_long_polls'), 2);
});
