// Pins the process registry and /metrics: Prometheus text, the capped queue label, the
// metrics token, and a failing collector that is counted without failing the scrape.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { metricsRoute } from '../../src/http/metrics-route.js';
import { Metrics, QUEUE_LABEL_CAP } from '../../src/metrics/index.js';

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
  metrics.gauge('broken', 'switchboard_test_broken', 'A collector that fails after one value.', ['queue'], (g) => {
    g.set({ queue: 'inbox' }, 1);
    return Promise.reject(new Error('database down'));
  });
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
