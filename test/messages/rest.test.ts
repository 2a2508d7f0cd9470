// Pins the REST twins of the queue under /api/v1/sessions/{id}/queue: a human's messages
// are `user`, a workflow token's are `workflow` (and it may do nothing else); the body can
// never choose provenance; a foreign session is 404 "Session not found" with nothing
// changed; and the message queue counters move after each committed change.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { ackMessage, nextMessage } from '../../src/messages/delivery.js';
import { expectError, expectStatus, makePeople, vend } from '../api/app.js';
import { testDatabase } from '../helpers/db.js';
import { instance } from './api.js';
import { session, stored } from './world.js';

const { pool, url } = await testDatabase('messages_rest');
const h = await instance(pool, url);
const metrics = h.metrics;
const people = await makePeople(h);
// Every test gets full rate-limit buckets.
beforeEach(() => h.fresh());

async function queueOf(person = people.member) {
  const { endpoint } = await vend(h, person);
  const sessionId = await session(pool, endpoint.id);
  return { endpointId: endpoint.id, sessionId, path: `/api/v1/sessions/${sessionId}/queue` };
}

/** The counter's value for one label set (or its only series). */
async function counter(name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = metrics.registry.getSingleMetric(name);
  assert.ok(metric, name);
  const { values } = await metric.get();
  const match = values.find((v) => Object.entries(labels).every(([k, x]) => v.labels[k] === x));
  return match?.value ?? 0;
}

const SERIES: Array<[string, Record<string, string>]> = [
  ['switchboard_message_queue_added_total', { queued_by: 'user' }],
  ['switchboard_message_queue_rejected_total', { reason: 'queue_full' }],
  ['switchboard_message_queue_removed_total', { action: 'remove' }],
  ['switchboard_message_queue_removed_total', { action: 'clear' }],
  ['switchboard_message_queue_delivered_total', {}],
  ['switchboard_message_queue_acknowledged_total', {}],
];

async function readAll(): Promise<number[]> {
  return Promise.all(SERIES.map(([name, labels]) => counter(name, labels)));
}

test('a human adds, edits, reorders, removes and clears; every answer is scoped to the session', async () => {
  const q = await queueOf();
  const token = people.member.token;
  const one = await h.post(q.path, { token, body: { content: 'one' } });
  expectStatus(one, 201);
  assert.equal(one.body.queued_by, 'user');
  assert.equal(one.body.sender_id, people.member.human.id);
  const two = (await h.post(q.path, { token, body: { content: 'two' } })).body;
  const edited = await h.request('PATCH', `${q.path}/${one.body.id}`, { token, body: { content: 'uno' } });
  expectStatus(edited, 200);
  assert.equal(edited.body.content, 'uno');
  const reordered = await h.post(`${q.path}/reorder`, { token, body: { entry_ids: [two.id, one.body.id] } });
  assert.deepEqual(
    (reordered.body.entries as { content: string }[]).map((e) => e.content),
    ['two', 'uno'],
  );
  expectError(await h.post(`${q.path}/reorder`, { token, body: { entry_ids: [two.id] } }), 409, 'queue_changed');
  assert.deepEqual((await h.delete(`${q.path}/${two.id}`, { token })).body, { entry_id: two.id });
  expectError(await h.delete(`${q.path}/${two.id}`, { token }), 404, 'entry_not_found');
  expectError(await h.delete(`${q.path}/not-a-uuid`, { token }), 404, 'entry_not_found');
  assert.equal((await h.delete(q.path, { token })).body.removed, 1);
  assert.deepEqual((await h.get(q.path, { token })).body, { session_id: q.sessionId, entries: [], count: 0, max: 10 });
});

test('the body cannot choose provenance: queued_by on add or edit is 400 naming it, nothing stored', async () => {
  const q = await queueOf();
  const token = people.member.token;
  const mine = (await h.post(q.path, { token, body: { content: 'mine' } })).body;
  for (const claim of ['agent', 'workflow', 'server']) {
    expectError(
      await h.post(q.path, { token, body: { content: 'x', queued_by: claim } }),
      400,
      'invalid_argument',
      'queued_by',
    );
    expectError(
      await h.request('PATCH', `${q.path}/${mine.id}`, { token, body: { content: 'x', queued_by: claim } }),
      400,
      'invalid_argument',
      'queued_by',
    );
  }
  expectError(await h.post(q.path, { token, body: { content: '' } }), 400, 'invalid_argument', 'content');
  expectError(
    await h.post(q.path, { token, body: { content: 'x'.repeat(16 * 1024 + 1) } }),
    400,
    'invalid_argument',
    'content',
  );
  assert.deepEqual(
    (await stored(pool, q.sessionId)).map((r) => [r.content, r.queued_by]),
    [['mine', 'user']],
  );
});

test('a workflow token queues as workflow into its human’s sessions and may do nothing else', async () => {
  const q = await queueOf();
  const minted = await h.post('/api/v1/tokens', { token: people.member.token, body: { name: 'ci' } });
  expectStatus(minted, 201);
  const wf = minted.body.secret as string;
  const added = await h.post(q.path, { token: wf, body: { content: 'build is green' } });
  expectStatus(added, 201);
  assert.equal(added.body.queued_by, 'workflow');
  assert.equal(added.body.sender_id, minted.body.token.id);
  expectError(await h.get(q.path, { token: wf }), 403, 'forbidden');
  expectError(await h.delete(q.path, { token: wf }), 403, 'forbidden');
  const theirs = await queueOf(people.other);
  expectError(await h.post(theirs.path, { token: wf, body: { content: 'x' } }), 404, 'not_found');
  // The human cannot edit the workflow's row, but may remove it.
  const id = added.body.id as string;
  expectError(
    await h.request('PATCH', `${q.path}/${id}`, { token: people.member.token, body: { content: 'y' } }),
    404,
    'entry_not_found',
  );
  expectStatus(await h.delete(`${q.path}/${id}`, { token: people.member.token }), 200);
});

test('another human’s, an unknown and a closed session answer 404 "Session not found" and change nothing', async () => {
  const theirs = await queueOf(people.other);
  await h.post(theirs.path, { token: people.other.token, body: { content: 'keep' } });
  const closed = await queueOf();
  await pool.query('UPDATE mcp_sessions SET closed_at = now() WHERE id = $1', [closed.sessionId]);
  const before = await stored(pool, theirs.sessionId);
  for (const path of [theirs.path, '/api/v1/sessions/ms_unknown/queue', closed.path]) {
    for (const [method, suffix, body] of [
      ['GET', '', undefined],
      ['POST', '', { content: 'x' }],
      ['DELETE', '', undefined],
      ['POST', '/reorder', { entry_ids: [] }],
      ['PATCH', `/${before[0]?.id}`, { content: 'x' }],
      ['DELETE', `/${before[0]?.id}`, undefined],
    ] as const) {
      const res = await h.request(method, `${path}${suffix}`, {
        token: people.member.token,
        ...(body ? { body } : {}),
      });
      expectError(res, 404, 'not_found', undefined, `${method} ${path}${suffix}`);
      assert.deepEqual(res.body, { error: { code: 'not_found', message: 'Session not found' } });
    }
  }
  assert.deepEqual(await stored(pool, theirs.sessionId), before);
});

test('the counters move after each committed change: added, removed by action, rejected, delivered, acknowledged', async () => {
  const q = await queueOf();
  const token = people.member.token;
  const before = await readAll();
  await h.request('PATCH', '/api/v1/settings/message-queue', {
    token: people.admin.token,
    body: { max_per_session: 3 },
  });
  const ids = [];
  for (let i = 0; i < 3; i++) ids.push((await h.post(q.path, { token, body: { content: `m${i}` } })).body.id);
  expectError(await h.post(q.path, { token, body: { content: 'full' } }), 409, 'queue_full');
  await h.delete(`${q.path}/${ids[2]}`, { token });
  const ref = { endpointId: q.endpointId, sessionId: q.sessionId };
  const next = await nextMessage(h.messages, ref);
  assert.ok('message' in next && next.message);
  await ackMessage(h.messages, ref, { message_id: next.message.message_id });
  await h.delete(q.path, { token });
  const after = await readAll();
  // 3 added, 1 refused, 1 removed, 1 cleared, the head delivered and acknowledged.
  assert.deepEqual(
    after.map((n, i) => n - (before[i] ?? 0)),
    [3, 1, 1, 1, 1, 1],
  );
  await h.request('PATCH', '/api/v1/settings/message-queue', {
    token: people.admin.token,
    body: { max_per_session: 10 },
  });
});
