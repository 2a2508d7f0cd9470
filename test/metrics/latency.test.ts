// Pins the latency histograms (docs/metrics.md, "Latency"): a claim observes how long its
// todo waited ready, a settle how long its claim ran, each exactly once with the endpoint
// and queue labels; an HTTP answer is timed under its route pattern, never its URL; and
// the documented labels and buckets are the code's.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  DOORBELL_DELIVERY_BUCKETS,
  HTTP_BUCKETS,
  LONG_POLL_BUCKETS,
  QUEUE_WAIT_BUCKETS,
  RUN_BUCKETS,
} from '../../src/metrics/latency.js';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { agent, recordedRing, tool } from '../doorbell/world.js';
import { connect, ok, vend } from '../mcp/harness.js';

const { pool, url } = await testDatabase('metrics_latency');
const server = await startTestServer(url, 'latency', { SWITCHBOARD_METRICS_MAX_ENDPOINTS: '1' });

const scrape = async () => (await fetch(`${server.url}/metrics`)).text();
const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const sample = (text: string, series: string, labels: string) =>
  Number(new RegExp(`^${series}\\{${escape(labels)}\\} (\\S+)$`, 'm').exec(text)?.[1]);

/** Moves a todo's ready_at or claimed_at an hour back: the observed seconds are then at least 3600. */
const hourAgo = (id: string, column: 'ready_at' | 'claimed_at') =>
  pool.query(`UPDATE todos SET ${column} = now() - interval '1 hour' WHERE id = $1`, [id]);

test('a claim over MCP observes its wait once and each settle its run time once, by outcome', async () => {
  const { endpoint, credential } = await vend(pool, { queues: ['inbox'] });
  const agent = await connect(server.url, credential);
  const create = async (extra: Record<string, unknown> = {}) =>
    (await ok(agent, 'create_todo', { queue: 'inbox', title: 'work', ...extra })).todo.id as string;
  const done = await create();
  await hourAgo(done, 'ready_at');
  const claimed = await ok(agent, 'claim_next', {});
  assert.equal(claimed.todo.id, done);
  assert.equal(claimed.todo.waited_seconds, undefined, 'the wait is not part of the answer');
  await hourAgo(done, 'claimed_at');
  const completed = await ok(agent, 'complete', { id: done });
  assert.equal(completed.todo.run_seconds, undefined, 'the run time is not part of the answer');
  const [failed, released] = [await create({ max_attempts: 1 }), await create()];
  await ok(agent, 'claim', { id: failed });
  await ok(agent, 'fail', { id: failed, error: 'no' });
  await ok(agent, 'claim', { id: released });
  await ok(agent, 'release', { id: released });

  const text = await scrape();
  const inbox = `endpoint="${endpoint.slug}",queue="inbox"`;
  assert.equal(sample(text, 'switchboard_queue_wait_seconds_count', inbox), 3, text);
  assert.ok(sample(text, 'switchboard_queue_wait_seconds_sum', inbox) >= 3600);
  assert.equal(
    sample(text, 'switchboard_queue_wait_seconds_bucket', `le="900",${inbox}`),
    2,
    'the back-dated wait is over 900 s',
  );
  const run = (outcome: string, part: string) =>
    sample(text, `switchboard_run_seconds_${part}`, `${inbox},outcome="${outcome}"`);
  assert.deepEqual(
    ['done', 'failed', 'released'].map((o) => run(o, 'count')),
    [1, 1, 1],
  );
  assert.ok(run('done', 'sum') >= 3600);
  assert.equal(
    sample(text, 'switchboard_run_seconds_bucket', `le="1800",${inbox},outcome="done"`),
    0,
    'the back-dated run is over 1800 s',
  );

  // SWITCHBOARD_METRICS_MAX_ENDPOINTS is 1 here: a second endpoint's claim folds into _other.
  const other = await vend(pool, { queues: ['inbox'] });
  const second = await connect(server.url, other.credential);
  const id = (await ok(second, 'create_todo', { queue: 'inbox', title: 'more' })).todo.id as string;
  await ok(second, 'claim', { id });
  const after = await scrape();
  assert.equal(sample(after, 'switchboard_queue_wait_seconds_count', 'endpoint="_other",queue="inbox"'), 1);
  assert.ok(!after.includes(other.endpoint.slug), 'the endpoint past the cap is in no series');
});

test('an HTTP answer is timed under its route pattern, never its URL', async () => {
  const { endpoint } = await vend(pool, { queues: ['inbox'] });
  const before = await scrape();
  const route = 'route="/api/v1/endpoints/:ref/todos",method="GET",status_class="4xx"';
  const count = (text: string, labels: string) =>
    sample(text, 'switchboard_http_request_duration_seconds_count', labels) || 0;
  const res = await fetch(`${server.url}/api/v1/endpoints/${endpoint.slug}/todos`);
  assert.equal(res.status, 401);
  const missing = await fetch(`${server.url}/no/such/${endpoint.slug}`);
  assert.equal(missing.status, 404);

  const text = await scrape();
  assert.equal(count(text, route) - count(before, route), 1, text);
  const unmatched = 'route="unmatched",method="GET",status_class="4xx"';
  assert.equal(count(text, unmatched) - count(before, unmatched), 1);
  assert.ok(count(text, 'route="/metrics",method="GET",status_class="2xx"') >= 1, 'scrapes are timed too');
  const http = text.split('\n').filter((l) => l.startsWith('switchboard_http_request_duration_seconds'));
  assert.ok(!http.some((l) => l.includes(endpoint.slug)), 'no URL is a label');
});

test('docs/metrics.md lists each histogram with the labels and buckets the code uses', async () => {
  const doc = readFileSync(new URL('../../docs/metrics.md', import.meta.url), 'utf8');
  const rows = new Map(
    [...doc.matchAll(/^\| `(switchboard_[a-z_]+)` *\| *histogram *\|([^|]*)\|([^|]*)\|/gm)].map((m) => [
      m[1],
      {
        labels: [...(m[2] ?? '').matchAll(/`([a-z_]+)`/g)].map((l) => l[1]),
        buckets: (m[3] ?? '').split(',').map(Number),
      },
    ]),
  );
  // A rung todo claimed, so the delivery histogram has a series to read labels from (the
  // long-poll series exist from the start).
  const { credential } = await vend(pool, { queues: ['inbox'] });
  const listener = await agent(pool, server.url, credential);
  const id = (await tool(listener, 'create_todo', { queue: 'inbox', title: 'rung' })).todo.id as string;
  await recordedRing(pool, id);
  assert.ok(!(await tool(listener, 'claim', { id })).isError);
  const text = await scrape();
  const expected: Array<[string, number[]]> = [
    ['switchboard_queue_wait_seconds', QUEUE_WAIT_BUCKETS],
    ['switchboard_run_seconds', RUN_BUCKETS],
    ['switchboard_http_request_duration_seconds', HTTP_BUCKETS],
    ['switchboard_doorbell_delivery_seconds', DOORBELL_DELIVERY_BUCKETS],
    ['switchboard_long_poll_wait_seconds', LONG_POLL_BUCKETS],
  ];
  for (const [name, buckets] of expected) {
    const row = rows.get(name);
    assert.ok(row, `${name} is in the Latency table`);
    assert.deepEqual(row.buckets, buckets, `${name}: documented buckets`);
    const line = new RegExp(`^${name}_count\\{([^}]*)\\}`, 'm').exec(text)?.[1] ?? '';
    assert.deepEqual(
      [...line.matchAll(/([a-z_]+)="/g)].map((l) => l[1]),
      row.labels,
      `${name}: documented labels`,
    );
  }
});
