// Pins doorbell gating and the reopen (docs/design/admission.md) on real servers: a
// deferred queue's work rings no stream, and exactly one todo_ready goes out — and one
// ring reaches the agent — when the window rolls over (moved by back-dating in SQL) or an
// in-flight slot frees, however many triggers and instances race to send it.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import pg from 'pg';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { holdPolicies, reopenHeld } from '../../src/budgets/reopen.js';
import { setPolicy } from '../../src/budgets/service.js';
import { CHANNEL } from '../../src/db/bus.js';
import type { Server } from '../../src/main.js';
import { claimNext, complete, createTodo, type Agent } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { startTestServer } from '../helpers/server.js';
import { holdSweep } from '../helpers/sweeps.js';
import { vend } from '../mcp/harness.js';
import { until } from '../helpers/wait.js';

const { pool, url } = await testDatabase('admission_reopen');
const deps = { db: pool, defaultLeaseSeconds: 300 };

const server = (name: string): Promise<Server> => startTestServer(url, name);

// Every test here runs the reopen sweep itself (reopenHeld); the servers' own 30 s sweep
// running between a test's steps would reopen what the test says stays held.
await holdSweep(pool, 'admission_reopen');
const a = await server('reopen-a');
const b = await server('reopen-b');

/** Every todo_ready flagged as a reopen, as a LISTENing client hears them. */
const reopens: Array<{ endpoint_id: string; queue: string }> = [];
const listenerDb = new pg.Client({ connectionString: url });
// The file's database is dropped (FORCE) at the end, possibly before this client ends.
listenerDb.on('error', () => undefined);
await listenerDb.connect();
await listenerDb.query(`LISTEN ${CHANNEL}`);
listenerDb.on('notification', (n) => {
  const event = JSON.parse(n.payload ?? '{}');
  if (event.type === 'todo_ready' && event.reopen === true) reopens.push(event);
});
after(() => listenerDb.end());

/** A vended endpoint with a connected stream collecting the todo ids it is rung for. */
async function agentWithStream(queues: string[]) {
  const v = await vend(pool, { queues });
  const rung: string[] = [];
  const client = new Client(
    { name: 'claude-code', version: '2.0.0' },
    { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  client.fallbackNotificationHandler = async (n) => {
    if (n.method === 'notifications/claude/channel')
      rung.push(String((n.params as { meta: { todo_id: string } }).meta.todo_id));
  };
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', a.url), {
    requestInit: { headers: { Authorization: `Bearer ${v.credential}` } },
  });
  await client.connect(transport);
  after(() => client.close());
  const sessionId = transport.sessionId ?? '';
  await until(async () => {
    const r = await pool.query(`SELECT stream_open FROM mcp_sessions WHERE id = $1`, [sessionId]);
    return r.rows[0]?.stream_open === true;
  }, 'the stream to open');
  const agent: Agent = { endpointId: v.endpoint.id, sessionId, queues, defaultLeaseSeconds: null };
  const push = async (queue: string) =>
    (await createTodo(deps, { endpointId: v.endpoint.id }, { humanId: v.humanId }, { queue, title: 'work' })).todo;
  const budget = (queue: string, policy: Record<string, unknown>) =>
    setPolicy({ db: pool }, { humanId: v.humanId, endpointId: null }, v.endpoint.id, queue, policy);
  return { v, rung, agent, push, budget };
}

const reopensOf = (endpointId: string) => reopens.filter((e) => e.endpoint_id === endpointId);

test('a deferred queue rings nothing, and one push goes out when its window rolls over', async () => {
  const s = await agentWithStream(['inbox', 'plain']);
  await s.budget('inbox', { max_claims_per_window: 1, window: { period: 'day', tz: 'UTC', start: '00:00' } });
  const first = await s.push('inbox');
  await until(() => s.rung.includes(first.id), 'the first todo to ring');
  const taken = await claimNext(deps, s.agent, { queue: 'inbox' });
  assert.ok('todo' in taken);
  // Settled, the session is idle again, so the control below rings it (one ring per idle agent).
  await complete(deps, s.agent, { id: taken.todo.id });
  const held = await s.push('inbox');
  const control = await s.push('plain');
  await until(() => s.rung.includes(control.id), 'the unbudgeted todo to ring');
  assert.equal(s.rung.includes(held.id), false, 'the deferred todo rang');
  // Answered and done, so the session is idle for the push after the rollover.
  const answered = await claimNext(deps, s.agent, { queue: 'plain' });
  assert.ok('todo' in answered && answered.todo.id === control.id);
  await complete(deps, s.agent, { id: control.id });
  // Let every instance's doorbell pass for these pushes end first: a pass reads the
  // deferral and then marks the policy held in a second statement. In production the mark
  // is skipped once the window's end the pass computed has passed (markHeld's `until`);
  // this test rolls the window over by moving its row instead of waiting for midnight, so a
  // pass still running across it would mark the policy held again after a reopen cleared
  // it, and a racing sweep would reopen it again (one extra push; seen under load).
  await new Promise((r) => setTimeout(r, 500));
  // Roll the window over: the counter's window now lies a day back, so today's is fresh.
  await pool.query(
    `UPDATE admission_windows SET window_start = window_start - interval '1 day'
      WHERE policy_id IN (SELECT id FROM admission_policies WHERE endpoint_id = $1)`,
    [s.v.endpoint.id],
  );
  const results = await Promise.all([reopenHeld(pool), reopenHeld(pool), reopenHeld(pool)]);
  assert.equal(
    results.reduce((n, r) => n + r.reopened, 0),
    1,
    'three racing sweeps reopen once',
  );
  await until(() => s.rung.includes(held.id), 'the held todo to ring after the rollover');
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(reopensOf(s.v.endpoint.id), [
    { type: 'todo_ready', endpoint_id: s.v.endpoint.id, queue: 'inbox', reopen: true },
  ]);
  assert.equal(s.rung.filter((id) => id === held.id).length, 1);
  assert.equal((await reopenHeld(pool)).reopened, 0, 'nothing is owed any more');
});

/** A queue of one slot, taken: the claimed todo, and one more waiting behind it. */
async function fullQueue() {
  const s = await agentWithStream(['inbox']);
  await s.budget('inbox', { max_in_flight: 1 });
  const first = await s.push('inbox');
  await until(() => s.rung.includes(first.id), 'the first todo to ring');
  const claimed = await claimNext(deps, s.agent, {});
  assert.ok('todo' in claimed);
  const waiting = await s.push('inbox');
  return { s, claimed, waiting };
}

test('a freed in-flight slot pushes once, at once', async () => {
  const { s, claimed, waiting } = await fullQueue();
  const refused = await claimNext(deps, { ...s.agent, sessionId: 'another' }, {});
  assert.ok('empty' in refused && refused.deferred?.[0]?.reason === 'in_flight_full');
  // The push's doorbell passes have held the queue (and read it full once more) by now.
  await Promise.all([a.doorbell.settle(), b.doorbell.settle()]);
  assert.equal(s.rung.includes(waiting.id), false, 'the waiting todo rang while the slot was taken');
  await complete(deps, s.agent, { id: claimed.todo.id });
  await until(() => s.rung.includes(waiting.id), 'the waiting todo to ring when the slot freed');
  assert.equal((await reopenHeld(pool)).reopened, 0);
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(reopensOf(s.v.endpoint.id).length, 1);
  assert.equal(s.rung.filter((id) => id === waiting.id).length, 1);
});

test('a hold decided on a read from before a slot freed reopens at once, not at the next sweep', async () => {
  const { s, claimed, waiting } = await fullQueue();
  const policy = await pool.query(`SELECT id FROM admission_policies WHERE endpoint_id = $1`, [s.v.endpoint.id]);
  const policyId: string = policy.rows[0].id;
  const heldAt = async () =>
    (await pool.query<{ held_at: Date | null }>(`SELECT held_at FROM admission_policies WHERE id = $1`, [policyId]))
      .rows[0]?.held_at;
  await until(async () => (await heldAt()) !== null, 'the doorbell to hold the new todo back');
  // Every instance's doorbell pass for that push ends first (each marks the policy held).
  await Promise.all([a.doorbell.settle(), b.doorbell.settle()]);
  // Another claim reads the queue full and is about to mark the policy held. Before its
  // mark lands, the slot frees: the settle finds no mark and pushes nothing.
  await pool.query(`UPDATE admission_policies SET held_at = NULL WHERE id = $1`, [policyId]);
  await complete(deps, s.agent, { id: claimed.todo.id });
  assert.equal(reopensOf(s.v.endpoint.id).length, 0);
  // Then the stale mark lands: it sees the queue admits again and pushes at once.
  await holdPolicies(pool, [{ policyId, until: null }]);
  await until(() => s.rung.includes(waiting.id), 'the waiting todo to ring without a sweep');
  assert.equal(await heldAt(), null, 'the policy is not left held');
  assert.equal(reopensOf(s.v.endpoint.id).length, 1);
});

test('a claim made before its queue had a policy frees its slot on the next sweep, not at once', async () => {
  const s = await agentWithStream(['inbox']);
  const first = await s.push('inbox');
  await until(() => s.rung.includes(first.id), 'the first todo to ring');
  const early = await claimNext(deps, s.agent, {});
  assert.ok('todo' in early);
  // The policy arrives while that claim is in flight: the queue is full, new work is held.
  await s.budget('inbox', { max_in_flight: 1 });
  const waiting = await s.push('inbox');
  await until(async () => {
    const r = await pool.query(`SELECT held_at FROM admission_policies WHERE endpoint_id = $1`, [s.v.endpoint.id]);
    return r.rows[0]?.held_at != null;
  }, 'the doorbell to hold the new todo back');
  // The pass that marked the hold reads the queue's status once more right after the mark
  // (holdPolicies); a complete landing before that read frees the slot it reads, and the
  // pass rightly reopens at once. Settled, the hold stands on the claim still in flight.
  await Promise.all([a.doorbell.settle(), b.doorbell.settle()]);
  assert.equal(s.rung.includes(waiting.id), false, 'the held todo rang while the queue was full');
  await complete(deps, s.agent, { id: early.todo.id });
  // Settling it read no policy (it was claimed where none existed: claimed_under_policy).
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(s.rung.includes(waiting.id), false, 'a claim made without a policy reopened at once');
  await reopenHeld(pool);
  await until(() => s.rung.includes(waiting.id), 'the held todo to ring after the sweep');
  assert.equal(reopensOf(s.v.endpoint.id).length, 1);
});

test('a policy write that admits again pushes the held work once', async () => {
  const s = await agentWithStream(['inbox']);
  await s.budget('inbox', { max_in_flight: 0 });
  const paused = await s.push('inbox');
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(s.rung.includes(paused.id), false, 'a paused queue rang');
  await s.budget('inbox', { max_in_flight: 2 });
  await until(() => s.rung.includes(paused.id), 'the paused todo to ring once the queue opens');
  assert.equal(reopensOf(s.v.endpoint.id).length, 1);
});

test('a stream that opens hears no ring for a deferred queue, only for the open one', async () => {
  const v = await vend(pool, { queues: ['held', 'open'] });
  await setPolicy({ db: pool }, { humanId: v.humanId, endpointId: null }, v.endpoint.id, 'held', { max_in_flight: 0 });
  const make = async (queue: string) =>
    (await createTodo(deps, { endpointId: v.endpoint.id }, { humanId: v.humanId }, { queue, title: 'waiting' })).todo;
  const held = await make('held');
  const open = await make('open');
  const rung: string[] = [];
  const client = new Client(
    { name: 'claude-code', version: '2.0.0' },
    { capabilities: { experimental: { 'claude/channel': {} } } },
  );
  client.fallbackNotificationHandler = async (n) => {
    if (n.method === 'notifications/claude/channel')
      rung.push(String((n.params as { meta: { todo_id: string } }).meta.todo_id));
  };
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', a.url), {
      requestInit: { headers: { Authorization: `Bearer ${v.credential}` } },
    }),
  );
  after(() => client.close());
  await until(() => rung.includes(open.id), 'the attach ring for the open queue');
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual(rung, [open.id]);
  const row = await pool.query(`SELECT ring_attempts FROM todos WHERE id = $1`, [held.id]);
  assert.equal(row.rows[0].ring_attempts, 0, 'no ring was spent on the deferred todo');
});
