// Pins the pure todo rules: the retry schedule and the lease precedence.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveLeaseSeconds, retryDelaySeconds, retrySchedule } from '../../src/domain/todo.js';

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
  assert.deepEqual(retrySchedule(), [30, 60, 120, 240, 480, 900]);
});

test('the lease is the per-call value, else the endpoint default, else the server default', () => {
  assert.equal(resolveLeaseSeconds(60, 120, 300), 60);
  assert.equal(resolveLeaseSeconds(undefined, 120, 300), 120);
  assert.equal(resolveLeaseSeconds(undefined, null, 300), 300);
});
