// Pins who the doorbell rings (docs/design/doorbell-acknowledgement.md, "Who is rung") on
// two real servers with the SDK's real client: only sessions that declared claude/channel,
// and each idle one once — not again while its ring is unanswered or it holds a claim —
// with the settled claim, ack_doorbell, the lapsed ack window and racing pushes covered.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addMessage } from '../../src/messages/queue.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agent, endpointOf, owner, recordedRing, server, tool, until, verdictOf, type Agent } from './world.js';

const { pool, url } = await testDatabase('who_is_rung');
const a = await server(url, 'rung-a');
const b = await server(url, 'rung-b');

function push(endpointId: string, humanId: string, title: string) {
  return createTodo({ db: pool, defaultLeaseSeconds: 300 }, { endpointId }, { humanId }, { queue: 'inbox', title });
}

/** Runs a ready pass on both instances and waits for every pass either has under way. */
async function passes(endpointId: string): Promise<void> {
  await Promise.all([a.doorbell.ready(endpointId, 'inbox'), b.doorbell.ready(endpointId, 'inbox')]);
  await Promise.all([a.doorbell.settle(), b.doorbell.settle()]);
}

async function ringsSpent(endpointId: string): Promise<number> {
  const res = await pool.query<{ n: number }>(
    `SELECT coalesce(sum(ring_attempts), 0)::int AS n FROM todos WHERE endpoint_id = $1`,
    [endpointId],
  );
  return res.rows[0]?.n ?? 0;
}

const claimedId = (body: { todo?: { id?: string } }) => body.todo?.id ?? '';

test('a session that did not declare claude/channel is never rung, while a declared one on the same endpoint is', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const plain = await agent(pool, a.url, ep.credential, { channel: false });
  const declared = await agent(pool, b.url, ep.credential);
  const { todo: first } = await push(ep.id, me.humanId, 'first');
  await until(() => declared.heard.length === 1, 'the declared session to be rung');
  assert.equal(declared.heard[0]?.meta.todo_id, first.id);

  // Busy, the declared session is not rung; the other still is not, by a ready pass or the sweep.
  assert.equal(claimedId(await tool(declared, 'claim', { id: first.id })), first.id);
  const { todo: second } = await push(ep.id, me.humanId, 'second');
  await passes(ep.id);
  await a.doorbell.rering();
  assert.deepEqual(plain.heard, []);
  assert.equal(
    (await pool.query('SELECT ring_attempts FROM todos WHERE id = $1', [second.id])).rows[0].ring_attempts,
    0,
  );
  // It long-polls instead, and a message for it waits for next_message.
  assert.equal(claimedId(await tool(plain, 'claim_next', { wait_seconds: 1 })), second.id);
  await addMessage(a.messages, { kind: 'user', humanId: me.humanId }, plain.sessionId, { content: 'steer' });
  const pulled = await tool(plain, 'next_message', { wait_seconds: 5 });
  assert.match(String(pulled.message?.content), /steer/);
  assert.deepEqual(plain.heard, []);
});

test('a burst of work rings an idle session once; holding a claim it is not rung; settled and idle it is rung for the rest', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const l = await agent(pool, a.url, ep.credential);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) ids.push((await push(ep.id, me.humanId, `work ${i}`)).todo.id);
  await until(() => l.heard.length === 1, 'the first ring');
  await passes(ep.id);
  assert.equal(l.heard.length, 1, 'its ring is unanswered: no second ring');
  const rungId = l.heard[0]?.meta.todo_id ?? '';
  assert.equal(rungId, ids[0]);

  assert.equal(claimedId(await tool(l, 'claim', { id: rungId })), rungId);
  await push(ep.id, me.humanId, 'while busy');
  await passes(ep.id);
  assert.equal(l.heard.length, 1, 'it holds a claim: no ring');
  assert.equal(await ringsSpent(ep.id), 1);

  await tool(l, 'complete', { id: rungId });
  await until(() => l.heard.length === 2, 'the ring after the settled claim');
  assert.equal(l.heard[1]?.meta.todo_id, ids[1], 'the oldest work never rung');
  await passes(ep.id);
  assert.equal(l.heard.length, 2);
});

test('a session that keeps claiming after it settles is not rung between its claims', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const l = await agent(pool, a.url, ep.credential);
  for (let i = 0; i < 6; i++) await push(ep.id, me.humanId, `drain ${i}`);
  await until(() => l.heard.length === 1, 'the first ring');
  // Every push's notice heard and passed: what follows is the agent's own doing.
  await passes(ep.id);
  for (;;) {
    const next = await tool(l, 'claim_next', {});
    if (next.empty) break;
    await tool(l, 'complete', { id: claimedId(next) });
  }
  // The idle check after the last settle finds nothing waiting.
  await Promise.all([a.doorbell.settle(), b.doorbell.settle()]);
  assert.equal(l.heard.length, 1);
});

test('two idle sessions share a burst: each is rung once', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const one = await agent(pool, a.url, ep.credential);
  const two = await agent(pool, b.url, ep.credential);
  for (let i = 0; i < 6; i++) await push(ep.id, me.humanId, `shared ${i}`);
  await until(() => one.heard.length === 1 && two.heard.length === 1, 'a ring each');
  await passes(ep.id);
  assert.equal(one.heard.length + two.heard.length, 2);
  assert.notEqual(one.heard[0]?.meta.todo_id, two.heard[0]?.meta.todo_id);
});

test('ack_doorbell answers a ring: the next work rings the session again', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const l = await agent(pool, a.url, ep.credential);
  const { todo } = await push(ep.id, me.humanId, 'heard, not taken');
  await until(() => l.heard.length === 1, 'the ring');
  const ring = await recordedRing(pool, todo.id);
  await tool(l, 'ack_doorbell', { ring_id: ring.id });
  const { todo: next } = await push(ep.id, me.humanId, 'next');
  await until(() => l.heard.length === 2, 'the ring after the ack');
  assert.equal(l.heard[1]?.meta.todo_id, next.id);
});

test('a ring unanswered past the ack window no longer holds the session back: the heartbeat sweep rings it', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const l = await agent(pool, a.url, ep.credential);
  await push(ep.id, me.humanId, 'unanswered');
  await until(() => l.heard.length === 1, 'the ring');
  const { todo: waiting } = await push(ep.id, me.humanId, 'waiting');
  await passes(ep.id);
  assert.equal(l.heard.length, 1);
  await pool.query(`UPDATE mcp_sessions SET last_rung_at = now() - interval '16 minutes' WHERE id = $1`, [l.sessionId]);
  await a.doorbell.rering();
  await until(() => l.heard.length === 2, 'the sweep ring');
  assert.equal(l.heard[1]?.meta.todo_id, waiting.id);
});

test('pushes racing on two instances ring one idle session once', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const l: Agent = await agent(pool, a.url, ep.credential);
  let release = () => {};
  const barrier = new Promise<void>((resolve) => (release = resolve));
  const racers = Array.from({ length: 8 }, async (_, i) => {
    await barrier;
    await push(ep.id, me.humanId, `race ${i}`);
    await (i % 2 === 0 ? a : b).doorbell.ready(ep.id, 'inbox');
  });
  release();
  await Promise.all(racers);
  await until(() => l.heard.length >= 1, 'the ring');
  await passes(ep.id);
  assert.equal(l.heard.length, 1);
  assert.equal(await ringsSpent(ep.id), 1);
});

test('the self-test says whether the session declared the channel: rung, or not rung and long-polling', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const plain = await agent(pool, a.url, ep.credential, { channel: false });
  const start = await tool(plain, 'test_doorbell', {});
  assert.deepEqual(start.channel_capability.sessions, [
    { session_id: plain.sessionId, declared: false, woken_by: 'long_poll' },
  ]);
  const report = await verdictOf(() => tool(plain, 'get_doorbell_test', { test_id: start.test_id }));
  assert.equal(report.verdict, 'no_channel');
  assert.deepEqual(plain.heard, []);
  assert.match((report.hints as string[]).join('\n'), /claim_next \{wait_seconds\}/);
  await plain.client.close();

  const declared = await agent(pool, a.url, ep.credential, { claimOnRing: true });
  const again = await tool(declared, 'test_doorbell', {});
  assert.deepEqual(again.channel_capability.sessions, [
    { session_id: declared.sessionId, declared: true, woken_by: 'doorbell' },
  ]);
  const passed = await verdictOf(() => tool(declared, 'get_doorbell_test', { test_id: again.test_id }));
  assert.equal(passed.verdict, 'pass');
});
