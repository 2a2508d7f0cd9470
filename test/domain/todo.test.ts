// Pins the pure todo rules: the retry schedule, its jitter bounds, the work-model fields and the lease precedence.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jitteredDelayBounds, retryDelaySeconds } from '../../src/domain/backoff.js';
import { createTodoInput, parseInput, resolveLeaseSeconds } from '../../src/domain/todo.js';

test('a failed attempt retries after 30 s, doubling, capped at 15 minutes', () => {
  const table: Array<[number, number]> = [
    [1, 30],
    [2, 60],
    [3, 120],
    [4, 240],
    [5, 480],
    [6, 900],
    [7, 900],
    [50, 900],
  ];
  for (const [attempt, seconds] of table) assert.equal(retryDelaySeconds(attempt), seconds, `attempt ${attempt}`);
});

test('the lease is the per-call value, else the endpoint default, else the server default', () => {
  assert.equal(resolveLeaseSeconds(60, 120, 300), 60);
  assert.equal(resolveLeaseSeconds(undefined, 120, 300), 120);
  assert.equal(resolveLeaseSeconds(undefined, null, 300), 300);
});

test("a todo's own backoff doubles its base up to its cap, and a huge attempt number stays at the cap", () => {
  const backoff = { baseSeconds: 5, maxSeconds: 60 };
  const table: Array<[number, number]> = [
    [1, 5],
    [2, 10],
    [3, 20],
    [4, 40],
    [5, 60],
    [100, 60],
  ];
  for (const [attempt, seconds] of table)
    assert.equal(retryDelaySeconds(attempt, backoff), seconds, `attempt ${attempt}`);
  assert.equal(retryDelaySeconds(100, { baseSeconds: 86_400, maxSeconds: 604_800 }), 604_800);
});

test('a jittered delay lies within 20 % either side of the scheduled one', () => {
  assert.deepEqual(jitteredDelayBounds(30), { min: 24, max: 36 });
  assert.deepEqual(jitteredDelayBounds(900), { min: 720, max: 1080 });
});

test('priority, not_before and retry_backoff are checked on create and a bad one names its field', () => {
  const base = { queue: 'inbox', title: 't' };
  const ok = parseInput(createTodoInput, {
    ...base,
    priority: -100,
    not_before: '2030-01-01T00:00:00+02:00',
    retry_backoff: { base_seconds: 1, max_seconds: 1 },
  });
  assert.equal(ok.priority, -100);
  const bad: Array<[Record<string, unknown>, string]> = [
    [{ priority: 101 }, 'priority'],
    [{ priority: 1.5 }, 'priority'],
    [{ priority: '5' }, 'priority'],
    [{ not_before: 'tomorrow' }, 'not_before'],
    [{ not_before: '2030-01-01T00:00:00' }, 'not_before'],
    [{ retry_backoff: { base_seconds: 0, max_seconds: 10 } }, 'retry_backoff.base_seconds'],
    [{ retry_backoff: { base_seconds: 60, max_seconds: 10 } }, 'retry_backoff.max_seconds'],
    [{ retry_backoff: { base_seconds: 1 } }, 'retry_backoff.max_seconds'],
    [{ retry_backoff: { base_seconds: 1, max_seconds: 2, jitter: 0 } }, 'jitter'],
  ];
  for (const [fields, field] of bad) {
    assert.throws(
      () => parseInput(createTodoInput, { ...base, ...fields }),
      (err: { details?: { field?: string } }) => err.details?.field === field,
      JSON.stringify(fields),
    );
  }
});
