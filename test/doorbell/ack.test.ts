// Pins doorbell acknowledgement on two real instances: a ring row written by the instance
// that rang (meta.ring_id and the row agree), acknowledged by a claim through the other
// instance; a late claim; the per-session unheard mark and ack_doorbell clearing it; a
// self-test rung on the instance that holds the stream.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Server } from '../../src/main.js';
import { createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agent, api, endpointOf, owner, server, sessionRow, tool, until, verdictOf, type Agent } from './world.js';

const { pool, url } = await testDatabase('ack');
const a = await server(url, 'ack-a');
const b = await server(url, 'ack-b');

async function counter(s: Server, name: string, labels: Record<string, string>): Promise<number> {
  const metric = await s.metrics.registry.getSingleMetric(name)?.get();
  const match = metric?.values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x));
  return match?.value ?? 0;
}

/** Over both instances: a background sweep tick on either may be the one that decided. */
async function total(name: string, labels: Record<string, string>): Promise<number> {
  return (await counter(a, name, labels)) + (await counter(b, name, labels));
}

async function ringRow(id: string) {
  return (await pool.query('SELECT * FROM doorbell_rings WHERE id = $1', [id])).rows[0] as Record<string, unknown>;
}

/** Pushes a todo as the human and waits for the agent to hear its doorbell and its row to be written. */
async function rung(humanId: string, endpointId: string, listener: Agent, title: string) {
  const before = listener.heard.length;
  const { todo } = await createTodo(
    { db: pool, defaultLeaseSeconds: 300 },
    { endpointId },
    { humanId },
    { queue: 'inbox', title },
  );
  await until(() => listener.heard.length > before, 'the doorbell');
  const ringId = listener.heard.at(-1)?.meta.ring_id ?? '';
  await Promise.all([a.doorbellAck.writer.flush(), b.doorbellAck.writer.flush()]);
  await until(async () => (await ringRow(ringId)) !== undefined, 'the ring row');
  // The ring goes unanswered past the ack window (time moved in SQL); until then the session
  // would not be rung for the next todo: one ring per idle agent ("Who is rung").
  await pool.query(`UPDATE mcp_sessions SET last_rung_at = last_rung_at - interval '1 hour' WHERE id = $1`, [
    listener.sessionId,
  ]);
  return { todo, ringId };
}

/** A tools/call POSTed to an instance for an existing session, as a load balancer would route it. */
async function callOn(s: Server, credential: string, sessionId: string, name: string, args: Record<string, unknown>) {
  const response = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${credential}`,
      'mcp-session-id': sessionId,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2025-06-18',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
  });
  const text = await response.text();
  const data = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '{}');
  return (JSON.parse(data) as { result: { structuredContent: Record<string, unknown> } }).result.structuredContent;
}

test('a claim through instance B acknowledges a ring that instance A wrote, and counts it heard once', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const listener = await agent(pool, a.url, ep.credential, { name: 'claude-code' });
  const sentBefore = await counter(a, 'switchboard_doorbell_rings_total', { kind: 'todo' });
  const { todo, ringId } = await rung(me.humanId, ep.id, listener, 'across instances');
  const row = await ringRow(ringId);
  assert.equal(row.session_id, listener.sessionId);
  assert.equal(row.todo_id, todo.id);
  assert.equal(row.kind, 'todo');
  assert.equal(row.acked_at, null);
  assert.equal(await counter(a, 'switchboard_doorbell_rings_total', { kind: 'todo' }), sentBefore + 1);

  const ackedBefore = await counter(b, 'switchboard_doorbell_rings_acknowledged_total', { kind: 'todo', via: 'claim' });
  const claimed = await callOn(b, ep.credential, listener.sessionId, 'claim', { id: todo.id });
  assert.equal((claimed.todo as { id: string }).id, todo.id);
  const acked = await ringRow(ringId);
  assert.ok(acked.acked_at);
  assert.equal(acked.ack_via, 'claim');
  assert.equal(acked.acked_session_id, listener.sessionId);
  assert.equal(acked.unheard_at, null);
  assert.equal(
    await counter(b, 'switchboard_doorbell_rings_acknowledged_total', { kind: 'todo', via: 'claim' }),
    ackedBefore + 1,
  );
});

test('a late claim records acked_at and ack_via but leaves the ring unheard and the counters alone', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const listener = await agent(pool, a.url, ep.credential);
  const { todo, ringId } = await rung(me.humanId, ep.id, listener, 'late');
  // Read before the ring is aged: either server's own unheard sweep may mark it first, in
  // which case the run below skips it (locked or already marked) and the mark lands a moment later.
  const unheardBefore = await total('switchboard_doorbell_rings_unheard_total', { kind: 'todo' });
  await pool.query(`UPDATE doorbell_rings SET sent_at = sent_at - interval '16 minutes' WHERE id = $1`, [ringId]);
  await a.doorbellAck.sweeps.find((s) => s.name === 'doorbell_unheard')?.run();
  await until(async () => (await ringRow(ringId)).unheard_at !== null, 'the ring to be marked unheard');
  await until(
    async () => (await total('switchboard_doorbell_rings_unheard_total', { kind: 'todo' })) === unheardBefore + 1,
    'the unheard counter to count it once',
  );

  const ackedBefore = await total('switchboard_doorbell_rings_acknowledged_total', { kind: 'todo', via: 'claim' });
  await tool(listener, 'claim', { id: todo.id });
  const late = await ringRow(ringId);
  assert.ok(late.acked_at, 'the late ack is recorded');
  assert.equal(late.ack_via, 'claim');
  assert.ok(late.unheard_at, 'the terminal state stays unheard');
  assert.equal(
    await total('switchboard_doorbell_rings_acknowledged_total', { kind: 'todo', via: 'claim' }),
    ackedBefore,
  );
  assert.equal(await total('switchboard_doorbell_rings_unheard_total', { kind: 'todo' }), unheardBefore + 1);
});

test('three unheard rings mark the session, and an ack_doorbell clears the mark', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const listener = await agent(pool, a.url, ep.credential);
  const rings: string[] = [];
  for (const title of ['one', 'two', 'three']) rings.push((await rung(me.humanId, ep.id, listener, title)).ringId);
  await pool.query(`UPDATE doorbell_rings SET sent_at = sent_at - interval '1 hour' WHERE id = ANY($1)`, [rings]);
  const sweep = a.doorbellAck.sweeps.find((s) => s.name === 'doorbell_unheard');
  assert.ok(sweep);
  await sweep.run();
  // Either instance's own tick of the sweep may have taken the aged rings first (SKIP
  // LOCKED) and mark the session in its next statement, a moment after this run returns.
  const latest = async () =>
    JSON.stringify(
      (
        await pool.query(
          `SELECT id, todo_id, sent_at, acked_at, unheard_at FROM doorbell_rings WHERE session_id = $1 ORDER BY sent_at DESC`,
          [listener.sessionId],
        )
      ).rows,
    );
  await until(
    async () => (await sessionRow(pool, listener.sessionId))?.unheard === true,
    `the session's unheard mark; its rings: ${await latest()}`,
  );
  const scrape = await (await fetch(`${a.url}/metrics`)).text();
  assert.match(scrape, /^switchboard_doorbell_unheard_sessions [1-9]/m);

  const ack = await tool(listener, 'ack_doorbell', { ring_id: rings[0] });
  assert.deepEqual(ack, { ring_id: rings[0], state: 'acknowledged', late: true, already: false });
  assert.equal((await sessionRow(pool, listener.sessionId))?.unheard, false);
  const again = await tool(listener, 'ack_doorbell', { ring_id: rings[0] });
  assert.deepEqual(again, { ring_id: rings[0], state: 'acknowledged', late: false, already: true });
  assert.equal((await ringRow(rings[0] ?? '')).ack_via, 'ack');
});

test('two unheard rings with an ack in between do not mark the session', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const listener = await agent(pool, a.url, ep.credential);
  const first = await rung(me.humanId, ep.id, listener, 'first');
  const middle = await rung(me.humanId, ep.id, listener, 'middle');
  await tool(listener, 'ack_doorbell', { ring_id: middle.ringId });
  const last = await rung(me.humanId, ep.id, listener, 'last');
  await pool.query(`UPDATE doorbell_rings SET sent_at = sent_at - interval '1 hour' WHERE id = ANY($1)`, [
    [first.ringId, middle.ringId, last.ringId],
  ]);
  await a.doorbellAck.sweeps.find((s) => s.name === 'doorbell_unheard')?.run();
  assert.equal((await sessionRow(pool, listener.sessionId))?.unheard, false);
  assert.equal((await ringRow(middle.ringId)).unheard_at, null, 'the acknowledged ring stays acknowledged');
});

test('ack_doorbell in the window counts as heard via ack, once', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const listener = await agent(pool, a.url, ep.credential);
  const { ringId } = await rung(me.humanId, ep.id, listener, 'digest-like');
  const before = await counter(a, 'switchboard_doorbell_rings_acknowledged_total', { kind: 'todo', via: 'ack' });
  assert.deepEqual(await tool(listener, 'ack_doorbell', { ring_id: ringId }), {
    ring_id: ringId,
    state: 'acknowledged',
    late: false,
    already: false,
  });
  await tool(listener, 'ack_doorbell', { ring_id: ringId });
  assert.equal(
    await counter(a, 'switchboard_doorbell_rings_acknowledged_total', { kind: 'todo', via: 'ack' }),
    before + 1,
  );
});

test('a self-test started through instance A rings the stream instance B holds, and passes', async () => {
  const me = await owner(pool);
  const ep = await endpointOf(pool, me.humanId);
  const listener = await agent(pool, b.url, ep.credential, { name: 'crush', claimOnRing: true });
  const path = `/api/v1/endpoints/${ep.slug}/doorbell-tests`;
  const start = await api(a.url, me.token, 'POST', path, { wait_seconds: 20 });
  assert.equal(start.status, 201);
  assert.deepEqual(start.body.channel_capability.clients, [{ name: 'crush', version: '9.9.9' }]);
  const report = await verdictOf(
    async (): Promise<unknown> => (await api(a.url, me.token, 'GET', `${path}/${start.body.test_id}`)).body,
  );
  assert.equal(report.verdict, 'pass');
  assert.equal(report.delivered.session_id, listener.sessionId);
  assert.equal(listener.heard.at(-1)?.meta.kind, 'doorbell_test');
});
