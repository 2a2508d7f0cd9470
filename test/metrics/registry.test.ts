// Pins the process registry and /metrics: Prometheus text, the capped queue label, the
// metrics token, a failing collector that is counted without failing the scrape, and
// the registry as one object: two are independent, and every family is registered once,
// by the constructor or by attaching a collector, whatever order the subsystems start in.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import type { Gauge } from 'prom-client';
import type { Pool } from '../../src/db/pool.js';
import { metricsRoute } from '../../src/http/metrics-route.js';
import { Metrics, QUEUE_LABEL_CAP } from '../../src/metrics/index.js';
import { UNHEARD_SESSIONS } from '../../src/metrics/doorbell.js';
import { collectFromDatabase } from '../../src/metrics-reads.js';
import { testServices } from '../helpers/services.js';

async function scrape(metrics: Metrics, token: string | null, headers: Record<string, string> = {}) {
  const app = Fastify();
  metricsRoute(app, { metrics, token });
  const res = await app.inject({ method: 'GET', url: '/metrics', headers });
  await app.close();
  return res;
}

test('/metrics serves the registry in Prometheus text, default process metrics included', async () => {
  const metrics = new Metrics();
  metrics.todosClaimed.inc({ queue: metrics.queueLabel('inbox') });
  const res = await scrape(metrics, null);
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /^text\/plain/);
  assert.match(res.body, /^switchboard_todos_claimed_total\{queue="inbox"\} 1$/m);
  assert.match(res.body, /^process_cpu_user_seconds_total /m);
});

test('with a metrics token, only that bearer opens /metrics; anything else is 401 with an empty body', async () => {
  const metrics = new Metrics({ defaults: false });
  const token = 'm'.repeat(40);
  const wrong: Array<Record<string, string>> = [
    {},
    { authorization: `Bearer ${'x'.repeat(40)}` },
    { authorization: 'Bearer sbk_abc' },
  ];
  for (const headers of wrong) {
    const res = await scrape(metrics, token, headers);
    assert.equal(res.statusCode, 401);
    assert.equal(res.body, '');
  }
  const res = await scrape(metrics, token, { authorization: `Bearer ${token}` });
  assert.equal(res.statusCode, 200);
  assert.match(res.body, /switchboard_todos_created_total 0/);
});

test('a failing collector is counted and left out, and the scrape still answers', async () => {
  const metrics = new Metrics({ defaults: false });
  const broken = {
    name: 'broken',
    gauges: [
      {
        name: 'switchboard_test_broken',
        help: 'A collector whose read fails.',
        labelNames: ['queue'],
        fill: (g: Gauge<string>) => g.set({ queue: 'inbox' }, 1),
      },
    ],
  };
  metrics.collect(broken, () => Promise.reject(new Error('database down')));
  const first = await scrape(metrics, null);
  assert.equal(first.statusCode, 200);
  assert.doesNotMatch(first.body, /^switchboard_test_broken\{/m);
  // Counted as it fails: the failing scrape may already have written the counter out.
  assert.match((await scrape(metrics, null)).body, /^switchboard_collection_errors_total\{collector="broken"\} [12]$/m);
});

test('queue labels past the cap fold into other, and known queues keep their own label', () => {
  const metrics = new Metrics({ defaults: false });
  for (let i = 0; i < QUEUE_LABEL_CAP; i++) assert.equal(metrics.queueLabel(`q${i}`), `q${i}`);
  assert.equal(metrics.queueLabel('one-too-many'), 'other');
  assert.equal(metrics.queueLabel('q7'), 'q7');
});

/** Names of every family on the registry, in registration order. */
const names = (metrics: Metrics) => metrics.registry.getMetricsAsArray().map((m) => m.name);

test('two registries are independent: counters, collectors and the queue label cap', async () => {
  const a = new Metrics({ defaults: false });
  const b = new Metrics({ defaults: false });
  a.todosClaimed.inc({ queue: a.queueLabel('inbox') });
  a.doorbell.sent([{ kind: 'todo', synthetic: false }]);
  a.messages.added.inc({ queued_by: 'user' });
  a.admission.charged.inc({ queue: 'inbox' });
  a.hooks.attempts.inc({ result: '2xx' });
  a.collect(UNHEARD_SESSIONS, async () => 4);
  const [one, two] = [await a.registry.metrics(), await b.registry.metrics()];
  assert.match(one, /^switchboard_todos_claimed_total\{queue="inbox"\} 1$/m);
  assert.match(one, /^switchboard_doorbell_rings_total\{kind="todo"\} 1$/m);
  assert.match(one, /^switchboard_message_queue_added_total\{queued_by="user"\} 1$/m);
  assert.match(one, /^switchboard_admission_charged_total\{queue="inbox"\} 1$/m);
  assert.match(one, /^switchboard_notify_hook_attempts_total\{result="2xx"\} 1$/m);
  assert.match(one, /^switchboard_doorbell_unheard_sessions 4$/m);
  assert.doesNotMatch(two, /^switchboard_todos_claimed_total\{/m);
  assert.match(two, /^switchboard_doorbell_rings_total\{kind="todo"\} 0$/m);
  assert.match(two, /^switchboard_message_queue_added_total\{queued_by="user"\} 0$/m);
  assert.doesNotMatch(two, /^switchboard_admission_charged_total\{/m);
  assert.match(two, /^switchboard_notify_hook_attempts_total\{result="2xx"\} 0$/m);
  assert.doesNotMatch(two, /switchboard_doorbell_unheard_sessions/);
  // The same collector attaches to the other registry too, with its own read.
  b.collect(UNHEARD_SESSIONS, async () => 7);
  assert.match(await b.registry.metrics(), /^switchboard_doorbell_unheard_sessions 7$/m);
  assert.match(await a.registry.metrics(), /^switchboard_doorbell_unheard_sessions 4$/m);

  for (let i = 0; i < QUEUE_LABEL_CAP; i++) a.queueLabel(`q${i}`);
  assert.equal(a.queueLabel('late'), 'other');
  assert.equal(b.queueLabel('late'), 'late');
});

test("every family is registered once: an instance's services add none beyond the registry and its collectors", async () => {
  // Nothing below reads the database or the bus until it is used: stand-ins are enough.
  const db = { query: () => Promise.reject(new Error('no database here')) } as unknown as Pool;
  const first = (await testServices({ pool: db })).metrics;
  const second = (await testServices({ pool: db })).metrics;
  const bare = new Metrics();
  collectFromDatabase(bare, db);
  for (const metrics of [first, second, bare]) {
    assert.equal(new Set(names(metrics)).size, names(metrics).length, 'no family twice');
  }
  assert.deepEqual(new Set(names(second)), new Set(names(first)));
  // The subsystems add nothing: every family comes from the constructor or a collector.
  assert.deepEqual(new Set(names(first)), new Set(names(bare)));
  // The scrape agrees: each family is written once, the error counter included.
  const text = await first.registry.metrics();
  const helps = [...text.matchAll(/^# HELP (\S+) /gm)].map((m) => m[1]);
  assert.equal(new Set(helps).size, helps.length);
  assert.equal(helps.filter((n) => n === 'switchboard_collection_errors_total').length, 1);
  // A collector attaches once: a second attach is refused rather than registered twice.
  assert.throws(() => collectFromDatabase(first, db), /registered already/);
});
