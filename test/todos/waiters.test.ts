// Pins the waiting rules of src/todos/waiters.ts without a database: first come first
// served, one event wakes one waiter, an event during an attempt is not lost, a deferred
// queue wakes only on its reopen, the fallback re-check, the bound, and the one notice
// (onWait) of a call that goes idle.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isAppError } from '../../src/domain/errors.js';
import { Registry } from 'prom-client';
import { LatencyHistograms } from '../../src/metrics/latency.js';
import { Waiters, type Attempt } from '../../src/todos/waiters.js';

/** A pile of work the fake attempts take from; each attempt is recorded by waiter name. */
function world() {
  const work: string[] = [];
  const tried: string[] = [];
  const deferred = new Set<string>();
  const attempt =
    (name: string, queue = 'inbox') =>
    async (): Promise<Attempt<string | null>> => {
      tried.push(name);
      await Promise.resolve();
      if (deferred.has(queue)) return { done: false, value: null, deferred: [queue] };
      const item = work.shift();
      return item === undefined ? { done: false, value: null } : { done: true, value: item, queue };
    };
  return { work, tried, deferred, attempt };
}

async function settled(waiters: Waiters, endpointId: string, n: number) {
  for (let i = 0; i < 200 && waiters.waiting(endpointId) !== n; i++) await new Promise((r) => setImmediate(r));
  // Let the first attempts finish (they are microtasks).
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
}

const request = (name: string, attempt: () => Promise<Attempt<string | null>>, seconds = 1) => ({
  verb: 'claim_next' as const,
  endpointId: 'ep',
  sessionId: `ms_${name}`,
  queues: ['inbox'],
  seconds,
  empty: null,
  attempt,
});

test('one event wakes the first waiter only; it claims and wakes the next, which finds nothing', async () => {
  const waiters = new Waiters({ maxPerEndpoint: 10, fallbackMs: 60_000 });
  const w = world();
  const first = waiters.wait(request('first', w.attempt('first')));
  const second = waiters.wait(request('second', w.attempt('second')));
  await settled(waiters, 'ep', 2);
  assert.deepEqual(w.tried, ['first', 'second']);
  w.work.push('td_1');
  waiters.todoReady('ep', 'inbox', false);
  assert.equal(await first, 'td_1');
  await settled(waiters, 'ep', 1);
  assert.deepEqual(w.tried, ['first', 'second', 'first', 'second'], 'the claimer passed the wake on');
  assert.equal(await second, null);
});

test('an event that lands during an attempt makes that waiter try again', async () => {
  const waiters = new Waiters({ maxPerEndpoint: 10, fallbackMs: 60_000 });
  const w = world();
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  let calls = 0;
  const attempt = async (): Promise<Attempt<string | null>> => {
    calls += 1;
    if (calls > 1) return w.attempt('only')();
    // The first attempt read before the work committed, and answers only later.
    await gate;
    return { done: false, value: null };
  };
  const only = waiters.wait(request('only', attempt, 30));
  await new Promise((r) => setImmediate(r));
  w.work.push('td_1');
  waiters.todoReady('ep', 'inbox', false);
  release();
  assert.equal(await only, 'td_1');
  assert.equal(calls, 2);
});

test('a deferred queue wakes nobody on a push, and wakes on its reopen', async () => {
  const waiters = new Waiters({ maxPerEndpoint: 10, fallbackMs: 60_000 });
  const w = world();
  w.deferred.add('inbox');
  const held = waiters.wait(request('held', w.attempt('held'), 5));
  await settled(waiters, 'ep', 1);
  w.work.push('td_1');
  waiters.todoReady('ep', 'inbox', false);
  await settled(waiters, 'ep', 1);
  assert.deepEqual(w.tried, ['held']);
  w.deferred.clear();
  waiters.todoReady('ep', 'inbox', true);
  assert.equal(await held, 'td_1');
  assert.deepEqual(w.tried, ['held', 'held']);
});

test('without any event, the fallback re-check finds the work', async () => {
  const waiters = new Waiters({ maxPerEndpoint: 10, fallbackMs: 50 });
  const w = world();
  const lost = waiters.wait(request('lost', w.attempt('lost'), 5));
  await settled(waiters, 'ep', 1);
  w.work.push('td_1');
  assert.equal(await lost, 'td_1');
});

test('another queue, another session or another endpoint wakes nobody; a session close ends its wait', async () => {
  const waiters = new Waiters({ maxPerEndpoint: 10, fallbackMs: 60_000 });
  const w = world();
  const one = waiters.wait(request('one', w.attempt('one'), 30));
  await settled(waiters, 'ep', 1);
  waiters.todoReady('ep', 'other', false);
  waiters.todoReady('ep2', 'inbox', false);
  waiters.messageReady('ep', 'ms_one');
  await settled(waiters, 'ep', 1);
  assert.deepEqual(w.tried, ['one']);
  waiters.end('ep', 'ms_someone_else');
  assert.equal(waiters.waiting('ep'), 1);
  waiters.end('ep', 'ms_one');
  assert.equal(await one, null);
  assert.equal(waiters.waiting(), 0);
});

test('past the bound a wait is refused before any attempt; an abort ends a wait at once', async () => {
  const waiters = new Waiters({ maxPerEndpoint: 1, fallbackMs: 60_000 });
  const w = world();
  const abort = new AbortController();
  const one = waiters.wait({ ...request('one', w.attempt('one'), 30), signal: abort.signal });
  await settled(waiters, 'ep', 1);
  await assert.rejects(waiters.wait(request('two', w.attempt('two'))), (err) => isAppError(err, 'resource_exhausted'));
  assert.deepEqual(w.tried, ['one']);
  abort.abort();
  assert.equal(await one, null);
  assert.equal(waiters.waiting('ep'), 0);
});

test('close ends every wait at once, and later calls attempt once without waiting', async () => {
  const waiters = new Waiters({ maxPerEndpoint: 10, fallbackMs: 60_000 });
  const w = world();
  const one = waiters.wait(request('one', w.attempt('one'), 30));
  await settled(waiters, 'ep', 1);
  waiters.close();
  assert.equal(await one, null);
  assert.equal(await waiters.wait(request('late', w.attempt('late'), 30)), null);
  assert.deepEqual(w.tried, ['one', 'late']);
  assert.equal(waiters.waiting(), 0);
});

test('each waiting call is timed once, by how it ended; a refused call is not timed', async () => {
  const latency = new LatencyHistograms(new Registry());
  const counts = async () => {
    const { values } = await latency.longPoll.get();
    const out: Record<string, number> = {};
    for (const v of values) {
      if (v.metricName === 'switchboard_long_poll_wait_seconds_count' && v.value > 0) {
        out[`${v.labels.verb}/${v.labels.outcome}`] = v.value;
      }
    }
    return out;
  };
  const waiters = new Waiters({ maxPerEndpoint: 3, fallbackMs: 60_000, metrics: latency });
  const w = world();
  const message = (name: string, seconds = 30) => ({
    ...request(name, w.attempt(name), seconds),
    verb: 'next_message' as const,
  });

  // work: woken by an event; timeout: nothing by its deadline; closed: its session ended.
  const worker = waiters.wait(request('worker', w.attempt('worker'), 30));
  const closed = waiters.wait(message('closed'));
  const timeout = waiters.wait(request('timeout', w.attempt('timeout'), 0.05));
  await settled(waiters, 'ep', 3);
  // The bound is reached: refused before any attempt, so it never waited and is not timed.
  await assert.rejects(waiters.wait(message('refused')), (err) => isAppError(err, 'resource_exhausted'));
  w.work.push('td_1');
  waiters.todoReady('ep', 'inbox', false);
  assert.equal(await worker, 'td_1');
  waiters.end('ep', 'ms_closed');
  assert.equal(await closed, null);
  assert.equal(await timeout, null);
  // gone: the caller went away, here while its attempt got work (the verb gives it back).
  const abort = new AbortController();
  const grabbing = async (): Promise<Attempt<string | null>> => {
    abort.abort();
    return { done: true, value: 'td_2', queue: 'inbox' };
  };
  assert.equal(await waiters.wait({ ...request('gone', grabbing, 30), signal: abort.signal }), 'td_2');
  // error: the attempt threw, and the call answers that error.
  const failing = async (): Promise<Attempt<string | null>> => {
    throw new Error('database down');
  };
  await assert.rejects(waiters.wait({ ...message('broken'), attempt: failing }), /database down/);
  assert.deepEqual(await counts(), {
    'claim_next/work': 1,
    'claim_next/timeout': 1,
    'claim_next/gone': 1,
    'next_message/closed': 1,
    'next_message/error': 1,
  });
  // Shutdown: a later call attempts once; with nothing to get, it is closed.
  waiters.close();
  assert.equal(await waiters.wait(message('late')), null);
  assert.equal((await counts())['next_message/closed'], 2);
});

test('a call is told to onWait once, when it first goes idle, with the seconds it may still wait; a call served at once is not', async () => {
  const told: Array<[string, string, number]> = [];
  const waiters = new Waiters({
    maxPerEndpoint: 10,
    fallbackMs: 60_000,
    onWait: (endpointId, sessionId, seconds) => told.push([endpointId, sessionId, seconds]),
  });
  const w = world();
  w.work.push('td_now');
  assert.equal(await waiters.wait(request('quick', w.attempt('quick'), 30)), 'td_now');
  assert.deepEqual(told, [], 'served by its first attempt: never waited');

  const waiting = waiters.wait(request('slow', w.attempt('slow'), 30));
  await settled(waiters, 'ep', 1);
  // Woken twice with nothing for it: it goes idle again, and is not told again.
  for (let i = 0; i < 2; i++) {
    waiters.todoReady('ep', 'inbox', false);
    await settled(waiters, 'ep', 1);
  }
  assert.deepEqual(w.tried, ['quick', 'slow', 'slow', 'slow']);
  assert.equal(told.length, 1);
  const [endpointId, sessionId, seconds] = told[0] ?? [];
  assert.deepEqual([endpointId, sessionId], ['ep', 'ms_slow']);
  assert.ok(
    seconds !== undefined && seconds >= 30 && seconds <= 31,
    `the rest of its deadline, rounded up: ${seconds}`,
  );
  w.work.push('td_later');
  waiters.todoReady('ep', 'inbox', false);
  assert.equal(await waiting, 'td_later');
});
