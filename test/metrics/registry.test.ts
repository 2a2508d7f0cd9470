// Pins the process registry: /metrics serves Prometheus text, and the queue label is capped.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import Fastify from 'fastify';
import { healthRoutes } from '../../src/api/health.js';
import { Metrics, QUEUE_LABEL_CAP } from '../../src/metrics/index.js';
import { versionInfo } from '../../src/version.js';

test('/metrics serves the registry in Prometheus text, default process metrics included', async () => {
  const metrics = new Metrics();
  metrics.todosClaimed.inc({ queue: metrics.queueLabel('inbox') });
  const app = Fastify();
  healthRoutes(app, {
    db: { query: () => Promise.reject(new Error('unused')) } as never,
    migrations: [],
    version: versionInfo(),
    metrics,
  });
  const res = await app.inject({ method: 'GET', url: '/metrics' });
  await app.close();
  assert.equal(res.statusCode, 200);
  assert.match(res.headers['content-type'] as string, /^text\/plain/);
  assert.match(res.body, /^switchboard_todos_claimed_total\{queue="inbox"\} 1$/m);
  assert.match(res.body, /^process_cpu_user_seconds_total /m);
});

test('queue labels past the cap fold into other, and known queues keep their own label', () => {
  const metrics = new Metrics({ defaults: false });
  for (let i = 0; i < QUEUE_LABEL_CAP; i++) assert.equal(metrics.queueLabel(`q${i}`), `q${i}`);
  assert.equal(metrics.queueLabel('one-too-many'), 'other');
  assert.equal(metrics.queueLabel('q7'), 'q7');
});
