// Pins long-poll waits (docs/design/mcp-surface.md, "Waiting") on two instances with a
// LISTEN/NOTIFY bus each, sharing one small pool: a claim_next or next_message with
// wait_seconds is woken by work made through the other instance, one todo wakes one
// waiter, a deferred queue wakes nobody until it reopens, a caller that went away claims
// nothing, a waiter holds no connection, and the per-endpoint bound answers
// resource_exhausted.

import assert from 'node:assert/strict';
import type { IncomingHttpHeaders } from 'node:http';
import { request as httpRequest } from 'node:http';
import { after, test } from 'node:test';
import { NotifyBus } from '../../src/db/bus.js';
import type { BusEvent } from '../../src/domain/events.js';
import { setPolicy } from '../../src/budgets/service.js';
import { testDatabase } from '../helpers/db.js';
import { connect, fails, ok, startApp, vend, type Body } from './harness.js';

// Four connections for both instances: 50 waiting calls could not each hold one.
const { pool, url } = await testDatabase('mcp_long_poll', 4);
const busA = new NotifyBus({ url });
const busB = new NotifyBus({ url });
await busA.start();
await busB.start();
after(() => busA.stop());
after(() => busB.stop());
const a = await startApp(pool, 'poll-a', busA, { env: { SWITCHBOARD_MAX_WAITERS_PER_ENDPOINT: '64' } });
const b = await startApp(pool, 'poll-b', busB, { env: { SWITCHBOARD_MAX_WAITERS_PER_ENDPOINT: '2' } });
// Only the waiters hear the bus (services.start() subscribes them the same way): no
// doorbell or message pump runs, so nothing but the waiting calls takes the work.
const unsubscribe = [a.services.waiters.listen(busA), b.services.waiters.listen(busB)];
after(() => unsubscribe.forEach((off) => off()));

async function until(check: () => boolean | Promise<boolean>, what: string, ms = 5_000): Promise<void> {
  for (const deadline = Date.now() + ms; Date.now() < deadline;) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 5));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/** Resolves with the next todo_ready instance A hears for this endpoint (after A's waiters heard it). */
function nextTodoReady(endpointId: string, reopen = false): Promise<BusEvent<'todo_ready'>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`instance A heard no todo_ready${reopen ? ' (reopen)' : ''} within 10 s`));
    }, 10_000);
    const off = busA.subscribe('todo_ready', (e) => {
      if (e.endpoint_id !== endpointId || (e.reopen === true) !== reopen) return;
      clearTimeout(timer);
      off();
      resolve(e);
    });
  });
}

/** An endpoint with a session on each instance. */
async function agent(input: Record<string, unknown> = {}) {
  const v = await vend(pool, input);
  const onA = await connect(a.url, v.credential, 'waiter');
  const onB = await connect(b.url, v.credential, 'maker');
  return { v, onA, onB };
}

const waitingOn = (endpointId: string) => a.services.waiters.waiting(endpointId);

/** A session opened by a bare initialize: no notification stream, so next_message is its only way to messages. */
async function bareSession(base: string, credential: string): Promise<string> {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${credential}`,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'poller', version: '0' } },
    }),
  });
  await res.text();
  const id = res.headers.get('mcp-session-id');
  assert.ok(id);
  return id;
}

/** A tools/call by plain fetch (the direct path), abortable by the caller. */
async function rawCall(
  base: string,
  credential: string,
  sessionId: string,
  name: string,
  args: object,
  signal?: AbortSignal,
) {
  const res = await fetch(`${base}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${credential}`,
      'mcp-session-id': sessionId,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    ...(signal ? { signal } : {}),
  });
  return (await res.json()) as { result: { structuredContent: Body; isError?: boolean } };
}

test('a waiter on instance A is woken by a create through instance B, and claims it', async () => {
  const s = await agent();
  const started = Date.now();
  const waiting = ok(s.onA, 'claim_next', { wait_seconds: 20 });
  await until(() => waitingOn(s.v.endpoint.id) === 1, 'the call to wait');
  const created = await ok(s.onB, 'create_todo', { queue: 'inbox', title: 'wake up', body: 'the body' });
  const claimed = await waiting;
  assert.equal(claimed.todo.id, created.todo.id);
  assert.equal(claimed.todo.state, 'claimed');
  assert.equal(claimed.todo.body, 'the body');
  assert.equal(claimed.todo.owner_session_id, s.onA.sessionId);
  assert.ok(Date.now() - started < 10_000, 'woken well before the deadline');
  assert.equal(waitingOn(s.v.endpoint.id), 0);
});

test('wait_seconds 0 or absent answers at once, as before', async () => {
  const s = await agent();
  assert.deepEqual(await ok(s.onA, 'claim_next', {}), { empty: true });
  assert.deepEqual(await ok(s.onA, 'claim_next', { wait_seconds: 0 }), { empty: true });
  assert.deepEqual(await ok(s.onA, 'next_message', { wait_seconds: 0 }), { empty: true });
});

test('wait_seconds outside 0–60 is invalid_argument naming the field', async () => {
  const s = await agent();
  for (const bad of [61, -1, 1.5, '5']) {
    await fails(s.onA, 'claim_next', { wait_seconds: bad }, 'invalid_argument', 'wait_seconds');
    await fails(s.onA, 'next_message', { wait_seconds: bad }, 'invalid_argument', 'wait_seconds');
  }
  assert.equal(waitingOn(s.v.endpoint.id), 0);
});

test('two waiters and one todo: exactly one claims it, the other answers empty at its deadline', async () => {
  const s = await agent();
  const second = await connect(a.url, s.v.credential, 'waiter-2');
  const started = Date.now();
  const calls = [ok(s.onA, 'claim_next', { wait_seconds: 3 }), ok(second, 'claim_next', { wait_seconds: 3 })];
  await until(() => waitingOn(s.v.endpoint.id) === 2, 'both calls to wait');
  const created = await ok(s.onB, 'create_todo', { queue: 'inbox', title: 'only one' });
  const answers = await Promise.all(calls);
  const claimed = answers.filter((x) => 'todo' in x);
  assert.equal(claimed.length, 1, JSON.stringify(answers));
  assert.equal(claimed[0].todo.id, created.todo.id);
  assert.deepEqual(
    answers.find((x) => !('todo' in x)),
    { empty: true },
  );
  assert.ok(Date.now() - started >= 3_000 - 50, 'the empty one waited to its deadline');
});

test('a deferred queue wakes nobody on a push, and wakes its waiter when the budget reopens', async () => {
  const s = await agent();
  await setPolicy({ db: pool }, { humanId: s.v.humanId, endpointId: null }, s.v.endpoint.id, 'inbox', {
    max_in_flight: 1,
  });
  const first = nextTodoReady(s.v.endpoint.id);
  await ok(s.onB, 'create_todo', { queue: 'inbox', title: 'in flight' });
  await first;
  const holder = await ok(s.onB, 'claim_next', {});
  assert.ok('todo' in holder);

  const attempts = a.services.waiters.attempts;
  const waiting = ok(s.onA, 'claim_next', { wait_seconds: 30 });
  await until(() => waitingOn(s.v.endpoint.id) === 1 && a.services.waiters.attempts === attempts + 1, 'the wait');
  // A push onto the full queue: A hears it, and its waiter does not try.
  const heard = nextTodoReady(s.v.endpoint.id);
  const held = await ok(s.onB, 'create_todo', { queue: 'inbox', title: 'held back' });
  await heard;
  assert.equal(a.services.waiters.attempts, attempts + 1, 'the push onto a deferred queue woke a waiter');
  assert.equal(waitingOn(s.v.endpoint.id), 1);

  // Completing the in-flight claim frees the slot: the reopen wakes the waiter, which claims.
  const reopened = nextTodoReady(s.v.endpoint.id, true);
  await ok(s.onB, 'complete', { id: holder.todo.id });
  await reopened;
  const claimed = await waiting;
  assert.equal(claimed.todo.id, held.todo.id);
  assert.ok(claimed.admission, 'a claim on a budgeted queue reports its headroom');
});

test('a waiter whose client went away ends at once and claims nothing: the todo stays pending', async () => {
  const s = await agent();
  const abort = new AbortController();
  const request = rawCall(a.url, s.v.credential, s.onA.sessionId, 'claim_next', { wait_seconds: 30 }, abort.signal);
  await until(() => waitingOn(s.v.endpoint.id) === 1, 'the call to wait');
  abort.abort();
  await assert.rejects(request);
  await until(() => waitingOn(s.v.endpoint.id) === 0, 'the wait to end with its client');
  const heard = nextTodoReady(s.v.endpoint.id);
  const created = await ok(s.onB, 'create_todo', { queue: 'inbox', title: 'nobody is listening' });
  await heard;
  const row = await pool.query('SELECT state, claims FROM todos WHERE id = $1', [created.todo.id]);
  assert.deepEqual(row.rows[0], { state: 'pending', claims: 0 });
});

test('through the SDK transport too (a batch of one), a caller that went away ends its wait', async () => {
  const s = await agent();
  const abort = new AbortController();
  const request = fetch(`${a.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${s.v.credential}`,
      'mcp-session-id': s.onA.sessionId,
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
    },
    body: JSON.stringify([
      { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'claim_next', arguments: { wait_seconds: 30 } } },
    ]),
    signal: abort.signal,
  }).then((res) => res.text());
  await until(() => waitingOn(s.v.endpoint.id) === 1, 'the call to wait');
  abort.abort();
  await assert.rejects(request);
  await until(() => waitingOn(s.v.endpoint.id) === 0, 'the wait to end with its client');
});

test('a waiter ends at once when its session is closed on another instance', async () => {
  const s = await agent();
  const started = Date.now();
  const request = rawCall(a.url, s.v.credential, s.onA.sessionId, 'claim_next', { wait_seconds: 30 });
  await until(() => waitingOn(s.v.endpoint.id) === 1, 'the call to wait');
  const closing = await connect(b.url, s.v.credential, 'closer');
  const res = await fetch(`${b.url}/mcp`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${s.v.credential}`, 'mcp-session-id': s.onA.sessionId },
  });
  assert.equal(res.status, 200);
  const answer = await request;
  assert.deepEqual(answer.result.structuredContent, { empty: true });
  assert.ok(Date.now() - started < 10_000);
  await ok(closing, 'whoami');
});

test('50 waiting calls hold no pool connection: whoami and create answer promptly, and 50 todos wake all 50', async () => {
  const s = await agent();
  const calls: Promise<Body>[] = [];
  for (let i = 0; i < 50; i++) calls.push(ok(s.onA, 'claim_next', { wait_seconds: 30 }));
  await until(() => waitingOn(s.v.endpoint.id) === 50, 'all 50 calls to wait', 10_000);
  const t0 = Date.now();
  await ok(s.onA, 'whoami');
  const created = await ok(s.onA, 'create_todo', { queue: 'inbox', title: 'prompt' });
  // Pool starvation would hold them until a waiter's 30 s deadline; 10 s leaves a loaded machine room.
  assert.ok(Date.now() - t0 < 10_000, `whoami and create_todo took ${Date.now() - t0} ms beside 50 waiters`);
  const more = [created.todo.id];
  for (let i = 1; i < 50; i++) more.push((await ok(s.onB, 'create_todo', { queue: 'inbox', title: `t${i}` })).todo.id);
  const answers = await Promise.all(calls);
  const ids = answers.map((x: Body) => String(x.todo?.id));
  assert.equal(new Set(ids).size, 50, 'each waiter claimed a different todo');
  assert.deepEqual([...ids].sort(), [...more].sort());
  assert.ok(pool.totalCount <= 4);
});

test('past SWITCHBOARD_MAX_WAITERS_PER_ENDPOINT a waiting call is resource_exhausted', async () => {
  const s = await agent();
  const onB2 = await connect(b.url, s.v.credential, 'maker-2');
  const calls = [ok(s.onB, 'claim_next', { wait_seconds: 2 }), ok(onB2, 'next_message', { wait_seconds: 2 })];
  await until(() => b.services.waiters.waiting(s.v.endpoint.id) === 2, 'two calls to wait on B');
  const refused = await fails(s.onB, 'claim_next', { wait_seconds: 2 }, 'resource_exhausted', 'wait_seconds');
  assert.equal(refused.error.limit, 2);
  await fails(onB2, 'next_message', { wait_seconds: 1 }, 'resource_exhausted');
  // A call that does not wait is never refused, and the bound is per instance.
  assert.deepEqual(await ok(s.onB, 'claim_next', {}), { empty: true });
  assert.deepEqual(await Promise.all(calls), [{ empty: true }, { empty: true }]);
});

test('next_message with wait_seconds is woken by a message queued after the call started', async () => {
  const s = await agent();
  const session = await bareSession(a.url, s.v.credential);
  const next = (args: object) => rawCall(a.url, s.v.credential, session, 'next_message', args);
  const waiting = next({ wait_seconds: 20 });
  await until(() => waitingOn(s.v.endpoint.id) === 1, 'the call to wait');
  await ok(s.onB, 'send_message', { session_id: session, content: 'hello, waiter' });
  const got = (await waiting).result.structuredContent;
  assert.equal(got.message?.content, 'hello, waiter', JSON.stringify(got));
  assert.equal(got.message.queued_by, 'agent');
  // The ack tells the session's queue changed; heard here before the next wait starts.
  const ackHeard = new Promise<void>((resolve) => {
    const off = busA.subscribe('message_ready', (e) => {
      if (e.session_id === session && e.deliver !== false) resolve(off());
    });
  });
  const acked = await rawCall(a.url, s.v.credential, session, 'ack_message', { message_id: got.message.message_id });
  assert.equal(acked.result.isError, undefined);
  await ackHeard;
  // Another session's message does not wake it.
  const attempts = a.services.waiters.attempts;
  const quiet = next({ wait_seconds: 1 });
  await until(
    () => waitingOn(s.v.endpoint.id) === 1 && a.services.waiters.attempts === attempts + 1,
    'the second call to wait',
  );
  await ok(s.onB, 'send_message', { session_id: s.onB.sessionId, content: 'for the other session' });
  assert.deepEqual((await quiet).result.structuredContent, { empty: true });
  assert.equal(a.services.waiters.attempts, attempts + 1, "another session's message woke the waiter");
});

/** One POST /mcp on a connection of its own, closed after the answer (no keep-alive to outlive a shutdown). */
function oneShot(base: string, headers: Record<string, string>, body: object) {
  return new Promise<{ headers: IncomingHttpHeaders; text: string }>((resolve, reject) => {
    const req = httpRequest(
      `${base}/mcp`,
      {
        method: 'POST',
        agent: false,
        headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json', ...headers },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ headers: res.headers, text }));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

test('shutting an instance down ends its waiting calls instead of waiting out their deadlines', async () => {
  const c = await startApp(pool, 'poll-c');
  const v = await vend(pool);
  const auth = { authorization: `Bearer ${v.credential}` };
  const init = await oneShot(c.url, auth, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'doomed', version: '0' } },
  });
  const session = String(init.headers['mcp-session-id']);
  const started = Date.now();
  const request = oneShot(
    c.url,
    { ...auth, 'mcp-session-id': session },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'claim_next', arguments: { wait_seconds: 60 } } },
  );
  await until(() => c.services.waiters.waiting(v.endpoint.id) === 1, 'the call to wait');
  await c.app.close();
  const answer = JSON.parse((await request).text) as { result: { structuredContent: Body } };
  assert.deepEqual(answer.result.structuredContent, { empty: true });
  assert.ok(Date.now() - started < 10_000, `shutdown took ${Date.now() - started} ms`);
});
