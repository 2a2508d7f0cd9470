// Pins /ws, the board's queue socket: board-cookie sign-in and the Origin check; every
// action on a session the human cannot see (another human's, unknown, closed) answers
// NOT_FOUND "Session not found" with no queue data, nothing mutated, nothing published;
// a client's queued_by is a validation error; entry ids of another session never touch
// it; and message.queue.status_changed reaches that session's subscribers on every
// instance exactly once per successful mutation.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import WebSocket from 'ws';
import { localAdmin } from '../../src/identity/setup.js';
import { addServerMessage } from '../../src/messages/queue.js';
import { closeSession } from '../../src/store/sessions.js';
import { makePeople, PUBLIC_URL, vend } from '../api/app.js';
import { testDatabase } from '../helpers/db.js';
import { boardCookie, instance, listening, wsClient, type WsClient } from './api.js';
import { notices, session, stored } from './world.js';

const { pool, url } = await testDatabase('messages_ws');
const a = await instance(pool, url);
const b = await instance(pool, url);
const people = await makePeople(a);
const baseA = await listening(a);
const baseB = await listening(b);
const heard = await notices(url);

async function signedIn(base: string, email = people.member.email): Promise<WsClient> {
  return wsClient(base, { cookie: `sb_session=${await boardCookie(pool, email)}`, origin: PUBLIC_URL });
}

async function memberSession(): Promise<{ endpointId: string; sessionId: string }> {
  const { endpoint } = await vend(a, people.member);
  return { endpointId: endpoint.id, sessionId: await session(pool, endpoint.id) };
}

async function settle(ms = 250): Promise<void> {
  await heard.settle();
  await new Promise((r) => setTimeout(r, ms));
}

test('without a board cookie, or from another Origin, /ws refuses the upgrade', async () => {
  await assert.rejects(wsClient(baseA, { origin: PUBLIC_URL }), /HTTP 401/);
  const cookie = `sb_session=${await boardCookie(pool, people.member.email)}`;
  await assert.rejects(wsClient(baseA, { cookie, origin: 'https://evil.example' }), /HTTP 403/);
  const same = await wsClient(baseA, { cookie, origin: baseA });
  assert.equal((await same.request('message.queue.get', { session_id: 'ms_nope' })).payload.code, 'NOT_FOUND');
});

test('Clear all of one row per provenance: {removed: 4} and exactly one empty status to subscribers on both instances', async () => {
  const s = await memberSession();
  const watcherA = await signedIn(baseA);
  const watcherB = await signedIn(baseB);
  const actor = await signedIn(baseA);
  for (const w of [watcherA, watcherB])
    assert.equal((await w.request('message.queue.subscribe', { session_id: s.sessionId })).type, 'response');
  await actor.request('message.queue.add', { session_id: s.sessionId, content: 'from the human' });
  const ref = { endpointId: s.endpointId, sessionId: s.sessionId };
  await pool.query(
    `INSERT INTO queued_messages (endpoint_id, id, session_id, position, content, queued_by, sender_id, generation)
     VALUES ($1, gen_random_uuid(), $2, 10, 'from an agent', 'agent', $1, 0),
            ($1, gen_random_uuid(), $2, 11, 'from a workflow', 'workflow', 'tk_x', 0)`,
    [s.endpointId, s.sessionId],
  );
  await addServerMessage(a.messages, ref, 'from the server');
  await settle();
  const before = [watcherA.statuses.length, watcherB.statuses.length];
  const cleared = await actor.request('message.queue.cancel', { session_id: s.sessionId });
  assert.deepEqual(cleared.payload, { removed: 4 });
  await settle();
  for (const [i, w] of [watcherA, watcherB].entries()) {
    const fresh = w.statuses.slice(before[i]);
    assert.equal(fresh.length, 1, `instance ${i}: ${JSON.stringify(fresh)}`);
    assert.equal(fresh[0].action, 'message.queue.status_changed');
    assert.deepEqual(fresh[0].payload.entries, []);
    assert.equal(fresh[0].payload.session_id, s.sessionId);
  }
  const emptyAgain = await actor.request('message.queue.cancel', { session_id: s.sessionId });
  assert.deepEqual(emptyAgain.payload, { removed: 0 });
  await settle();
  assert.equal(watcherA.statuses.length, before[0]! + 1, 'an empty Clear all publishes nothing');
});

test('add, update, reorder, remove and get over /ws; the answers carry positions and provenance', async () => {
  const s = await memberSession();
  const c = await signedIn(baseB);
  const one = (await c.request('message.queue.add', { session_id: s.sessionId, content: 'one' })).payload;
  const two = (await c.request('message.queue.add', { session_id: s.sessionId, content: 'two' })).payload;
  assert.deepEqual([one.queued_by, one.position, two.position], ['user', 1, 2]);
  const edited = await c.request('message.queue.update', { session_id: s.sessionId, entry_id: one.id, content: 'uno' });
  assert.equal(edited.payload.content, 'uno');
  const reordered = await c.request('message.queue.reorder', { session_id: s.sessionId, entry_ids: [two.id, one.id] });
  assert.deepEqual(
    (reordered.payload.entries as { content: string }[]).map((e) => e.content),
    ['two', 'uno'],
  );
  const changed = await c.request('message.queue.reorder', { session_id: s.sessionId, entry_ids: [two.id] });
  assert.equal(changed.payload.code, 'queue_changed');
  assert.deepEqual((await c.request('message.queue.remove', { session_id: s.sessionId, entry_id: two.id })).payload, {
    entry_id: two.id,
  });
  const status = (await c.request('message.queue.get', { session_id: s.sessionId })).payload;
  assert.deepEqual([status.count, status.max, status.entries[0].content], [1, 10, 'uno']);
  assert.equal(
    (await c.request('message.queue.remove', { session_id: s.sessionId, entry_id: two.id })).payload.code,
    'entry_not_found',
  );
  assert.equal((await c.request('message.queue.nope', { session_id: s.sessionId })).payload.code, 'VALIDATION_ERROR');
  const wrongType = await c.raw({
    id: 99,
    type: 'response',
    action: 'message.queue.get',
    payload: { session_id: s.sessionId },
  });
  assert.deepEqual(
    [wrongType.type, wrongType.payload.code, wrongType.payload.details.field],
    ['error', 'VALIDATION_ERROR', 'type'],
  );
});

test('a payload claiming queued_by on add or update is a validation error and nothing changes', async () => {
  const s = await memberSession();
  const c = await signedIn(baseA);
  const mine = (await c.request('message.queue.add', { session_id: s.sessionId, content: 'mine' })).payload;
  for (const claim of ['agent', 'workflow', 'server']) {
    const add = await c.request('message.queue.add', { session_id: s.sessionId, content: 'x', queued_by: claim });
    assert.equal(add.payload.code, 'VALIDATION_ERROR');
    assert.equal(add.payload.details.field, 'queued_by');
    const upd = await c.request('message.queue.update', {
      session_id: s.sessionId,
      entry_id: mine.id,
      content: 'y',
      queued_by: claim,
    });
    assert.equal(upd.payload.code, 'VALIDATION_ERROR');
  }
  assert.deepEqual(
    (await stored(pool, s.sessionId)).map((r) => [r.content, r.queued_by]),
    [['mine', 'user']],
  );
});

test('an entry id of another session, named under my session, never touches its row', async () => {
  const mine = await memberSession();
  const theirs = await memberSession();
  const c = await signedIn(baseA);
  await c.request('message.queue.add', { session_id: mine.sessionId, content: 'mine' });
  const victim = (await c.request('message.queue.add', { session_id: theirs.sessionId, content: 'victim' })).payload;
  const attempts = await Promise.all([
    c.request('message.queue.remove', { session_id: mine.sessionId, entry_id: victim.id }),
    c.request('message.queue.update', { session_id: mine.sessionId, entry_id: victim.id, content: 'pwned' }),
    c.request('message.queue.reorder', { session_id: mine.sessionId, entry_ids: [victim.id] }),
  ]);
  assert.deepEqual(
    attempts.map((r) => r.payload.code as string),
    ['entry_not_found', 'entry_not_found', 'queue_changed'],
  );
  assert.deepEqual(
    (await stored(pool, theirs.sessionId)).map((r) => [r.id, r.content]),
    [[victim.id, 'victim']],
  );
});

test('every action on another human’s, an unknown or a closed session is NOT_FOUND "Session not found", with no effect', async () => {
  const foreign = await memberSession();
  const closed = await memberSession();
  const intruder = await signedIn(baseA, people.other.email);
  const owner = await signedIn(baseA);
  const entry = (await owner.request('message.queue.add', { session_id: foreign.sessionId, content: 'keep' })).payload;
  await owner.request('message.queue.subscribe', { session_id: foreign.sessionId });
  await closeSession(pool, closed.endpointId, closed.sessionId);
  await settle();
  const rowsBefore = await stored(pool, foreign.sessionId);
  const noticesBefore = heard.count(foreign.sessionId);
  const statusesBefore = owner.statuses.length;
  for (const sessionId of [foreign.sessionId, 'ms_01UNKNOWN', closed.sessionId]) {
    const asks: Array<[string, object]> = [
      ['message.queue.add', { content: 'x' }],
      ['message.queue.update', { entry_id: entry.id, content: 'x' }],
      ['message.queue.remove', { entry_id: entry.id }],
      ['message.queue.cancel', {}],
      ['message.queue.reorder', { entry_ids: [entry.id] }],
      ['message.queue.get', {}],
      ['message.queue.subscribe', {}],
    ];
    const client = sessionId === foreign.sessionId ? intruder : owner;
    for (const [action, rest] of asks) {
      const answer = await client.request(action, { session_id: sessionId, ...rest });
      assert.equal(answer.type, 'error', `${action} ${sessionId}`);
      assert.deepEqual(answer.payload, { code: 'NOT_FOUND', message: 'Session not found' }, `${action} ${sessionId}`);
    }
  }
  await settle();
  assert.deepEqual(await stored(pool, foreign.sessionId), rowsBefore);
  assert.equal(heard.count(foreign.sessionId), noticesBefore, 'nothing published');
  assert.equal(owner.statuses.length, statusesBefore);
  assert.equal(intruder.statuses.length, 0);
});

test('when the session ends its subscribers get its empty queue once more, marked closed', async () => {
  const s = await memberSession();
  const watcher = await signedIn(baseB);
  await watcher.request('message.queue.add', { session_id: s.sessionId, content: 'about to vanish' });
  await watcher.request('message.queue.subscribe', { session_id: s.sessionId });
  await settle();
  const before = watcher.statuses.length;
  await closeSession(pool, s.endpointId, s.sessionId);
  await settle();
  const fresh = watcher.statuses.slice(before);
  assert.equal(fresh.length, 1);
  assert.deepEqual(fresh[0].payload, { session_id: s.sessionId, entries: [], count: 0, closed: true });
  assert.equal((await stored(pool, s.sessionId)).length, 0);
});

test('with auth off the synthetic admin uses /ws without a cookie, on its own sessions', async () => {
  const admin = await localAdmin({ db: pool, publicUrl: PUBLIC_URL });
  const off = await instance(pool, url, { syntheticAdmin: admin });
  const base = await listening(off);
  const { endpoint } = await vend(off, { token: 'unused' });
  const sessionId = await session(pool, endpoint.id);
  const c = await wsClient(base, {});
  const added = await c.request('message.queue.add', { session_id: sessionId, content: 'no sign-in needed' });
  assert.equal(added.payload.queued_by, 'user');
  assert.equal(added.payload.sender_id, admin.human.id);
  const foreign = await memberSession();
  assert.equal((await c.request('message.queue.get', { session_id: foreign.sessionId })).payload.code, 'NOT_FOUND');
});

test('a connection sending more than the burst at once is rate limited, with nothing done for the excess', async () => {
  const s = await memberSession();
  const c = await signedIn(baseA);
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) => c.request('message.queue.add', { session_id: s.sessionId, content: `m${i}` })),
  );
  const kinds = answers.map((r) => (r.type === 'response' ? 'added' : (r.payload.code as string)));
  const count = (kind: string) => kinds.filter((k) => k === kind).length;
  assert.ok(count('resource_exhausted') > 0, 'some are refused by the limit');
  assert.equal(count('added') + count('queue_full') + count('resource_exhausted'), 60, kinds.join(','));
  assert.equal((await stored(pool, s.sessionId)).length, count('added'));
});

test('the frame limit per connection is a setting: with SWITCHBOARD_WS_BURST raised the same burst is all served', async () => {
  const raised = await instance(pool, url, { socketLimit: { perSecond: 20, burst: 100 } });
  const base = await listening(raised);
  const s = await memberSession();
  const c = await signedIn(base);
  const answers = await Promise.all(
    Array.from({ length: 60 }, (_, i) => c.request('message.queue.add', { session_id: s.sessionId, content: `r${i}` })),
  );
  const codes = answers.filter((r) => r.type !== 'response').map((r) => r.payload.code as string);
  assert.ok(!codes.includes('resource_exhausted'), codes.join(','));
});

/** Sends raw frames on a signed-in socket and collects every answer that is not a notification. */
async function rawFrames(frames: string[]): Promise<Record<string, unknown>[]> {
  const cookie = `sb_session=${await boardCookie(pool, people.member.email)}`;
  const socket = new WebSocket(`${baseA.replace(/^http/, 'ws')}/ws`, { headers: { cookie, origin: PUBLIC_URL } });
  await new Promise<void>((resolve, reject) => {
    socket.on('open', () => resolve());
    socket.on('error', reject);
  });
  const answers: Record<string, unknown>[] = [];
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${answers.length} of ${frames.length} frames answered`)), 20_000);
    socket.on('message', (data) => {
      const frame = JSON.parse(String(data)) as Record<string, unknown>;
      if (frame.type !== 'notification') answers.push(frame);
      if (answers.length === frames.length) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  for (const frame of frames) socket.send(frame);
  await done;
  socket.close();
  return answers;
}

// Found by the fuzzer (test/fuzz/ws.test.ts). A deeply nested id was echoed into
// JSON.stringify, whose stack overflow escaped as an unhandled rejection: the process
// would exit. `null` as a frame, an action named after an Object.prototype member, and a
// NUL in the payload answered INTERNAL_ERROR.
test('hostile frames answer VALIDATION_ERROR naming the field; the socket and the process live on', async () => {
  const s = await memberSession();
  const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
  const frames = [
    'null',
    '[1]',
    JSON.stringify({ id: 1, type: 'request', action: 'constructor', payload: {} }),
    JSON.stringify({ id: 2, type: 'request', action: '__proto__', payload: {} }),
    JSON.stringify({
      id: 3,
      type: 'request',
      action: 'message.queue.add',
      payload: { session_id: s.sessionId, content: 'a\u0000b' },
    }),
    JSON.stringify({ id: 4, type: 'request', action: 'message.queue.get', payload: { session_id: 'ms_\u0000' } }),
    `{"id":${deep},"type":"request","action":"message.queue.get","payload":{}}`,
    `{"id":5,"type":"request","action":${deep},"payload":{}}`,
  ];
  const answers = await rawFrames(frames);
  const fields = answers.map((a) => {
    const payload = a.payload as { code?: string; details?: { field?: string } };
    return [a.id, payload.code, payload.details?.field];
  });
  assert.deepEqual(fields, [
    [null, 'VALIDATION_ERROR', 'action'],
    [null, 'VALIDATION_ERROR', 'action'],
    [1, 'VALIDATION_ERROR', 'action'],
    [2, 'VALIDATION_ERROR', 'action'],
    [3, 'VALIDATION_ERROR', 'content'],
    [4, 'VALIDATION_ERROR', 'session_id'],
    [null, 'VALIDATION_ERROR', 'id'],
    [5, 'VALIDATION_ERROR', 'action'],
  ]);
  assert.deepEqual(await stored(pool, s.sessionId), []);
});
