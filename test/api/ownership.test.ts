// Pins that another human's endpoint, todo, token or webhook answers exactly like an unknown id (404, same body) and is left untouched.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import { apiHarness, expectStatus, makePeople, push, snapshot, vend, withoutId, type Reply, idsOf } from './app.js';

const h = await apiHarness('api_ownership');
const { member: a, other: b } = await makePeople(h);
beforeEach(() => h.fresh());

// A's things: a live endpoint (with a pending and a canceled todo and a webhook) and a
// revoked one, so that each foreign call would have acted had it been A's own.
const live = (await vend(h, a, { name: 'a live' })).endpoint;
const revoked = (await vend(h, a, { name: 'a revoked' })).endpoint;
expectStatus(await h.post(`/api/v1/endpoints/${revoked.slug}/revoke`, { token: a.token }), 200);
const pending = await push(h, a, live.slug, { title: 'pending' });
const canceled = await push(h, a, live.slug, { title: 'canceled' });
expectStatus(await h.post(`/api/v1/todos/${canceled.id}/cancel`, { token: a.token }), 200);
const hook = await h.post(`/api/v1/endpoints/${live.slug}/webhooks`, { token: a.token, body: { queue: 'inbox' } });
expectStatus(hook, 201);
const webhookId: string = hook.body.webhook.id;
// B has an endpoint of its own, so B is a human with something to see.
await vend(h, b, { name: 'b own' });
await h.fresh();

interface Case {
  label: string;
  method: string;
  /** The URL with `{}` where the id goes. */
  url: string;
  foreign: string;
  unknown: string;
  body?: unknown;
}

function endpointCases(ref: string, unknown: string, kind: string): Case[] {
  const c = (label: string, method: string, url: string, body?: unknown): Case => ({
    label: `${label} (A's endpoint by ${kind})`,
    method,
    url,
    foreign: ref,
    unknown,
    ...(body !== undefined ? { body } : {}),
  });
  return [
    c('show', 'GET', '/api/v1/endpoints/{}'),
    c('rotate', 'POST', '/api/v1/endpoints/{}/rotate'),
    c('revoke', 'POST', '/api/v1/endpoints/{}/revoke'),
    c('delete', 'DELETE', '/api/v1/endpoints/{}'),
    c('push a todo', 'POST', '/api/v1/endpoints/{}/todos', { queue: 'inbox', title: 'from B' }),
    c('list todos', 'GET', '/api/v1/endpoints/{}/todos'),
    c('create a webhook', 'POST', '/api/v1/endpoints/{}/webhooks', { queue: 'inbox' }),
    c('list webhooks', 'GET', '/api/v1/endpoints/{}/webhooks'),
  ];
}

const unknownSlug = 'a-live-zzzzzzzz';
const CASES: Case[] = [
  ...endpointCases(live.slug, unknownSlug, 'slug'),
  ...endpointCases(live.id, newId('ep'), 'id'),
  ...endpointCases(revoked.slug, unknownSlug, 'slug, revoked'),
  ...endpointCases(revoked.id, newId('ep'), 'id, revoked'),
  { label: 'show A’s todo', method: 'GET', url: '/api/v1/todos/{}', foreign: pending.id, unknown: newId('td') },
  {
    label: 'cancel A’s todo',
    method: 'POST',
    url: '/api/v1/todos/{}/cancel',
    foreign: pending.id,
    unknown: newId('td'),
  },
  {
    label: 'retry A’s todo',
    method: 'POST',
    url: '/api/v1/todos/{}/retry',
    foreign: canceled.id,
    unknown: newId('td'),
  },
  { label: 'revoke A’s token', method: 'DELETE', url: '/api/v1/tokens/{}', foreign: a.tokenId, unknown: newId('tk') },
  {
    label: 'rotate A’s webhook',
    method: 'POST',
    url: '/api/v1/webhooks/{}/rotate',
    foreign: webhookId,
    unknown: newId('wh'),
  },
  {
    label: 'delete A’s webhook',
    method: 'DELETE',
    url: '/api/v1/webhooks/{}',
    foreign: webhookId,
    unknown: newId('wh'),
  },
];

function call(c: Case, id: string): Promise<Reply> {
  return h.request(c.method, c.url.replace('{}', id), {
    token: b.token,
    ...(c.body !== undefined ? { body: c.body } : {}),
  });
}

test('every route answers another human’s id with 404 and the body of an unknown id, changing nothing', async () => {
  // One call first, so B's token is stamped as used before the snapshot.
  expectStatus(await h.get('/api/v1/endpoints', { token: b.token }), 200);
  const before = await snapshot(h.pool);
  const mismatches: string[] = [];
  for (const c of CASES) {
    await h.fresh(); // full rate-limit buckets: 60-odd calls on one token exceed its burst
    const foreign = await call(c, c.foreign);
    const unknown = await call(c, c.unknown);
    if (foreign.status !== 404 || foreign.body?.error?.code !== 'not_found') {
      mismatches.push(`${c.label}: ${foreign.status} ${foreign.text}`);
      continue;
    }
    try {
      assert.deepEqual(withoutId(foreign, c.foreign), withoutId(unknown, c.unknown));
      assert.equal(foreign.headers['content-type'], unknown.headers['content-type']);
    } catch {
      mismatches.push(`${c.label}: ${foreign.text} differs from ${unknown.text}`);
    }
  }
  assert.deepEqual(mismatches, []);
  assert.deepEqual(await snapshot(h.pool), before, 'a foreign call changed the database');
});

test('A still sees and acts on everything B was refused', async () => {
  expectStatus(await h.get(`/api/v1/endpoints/${live.slug}`, { token: a.token }), 200);
  expectStatus(await h.get(`/api/v1/todos/${pending.id}`, { token: a.token }), 200);
  const list = await h.get(`/api/v1/endpoints/${live.id}/webhooks`, { token: a.token });
  assert.deepEqual(idsOf(list.body.webhooks), [webhookId]);
  expectStatus(await h.get('/api/v1/whoami', { token: a.token }), 200);
});

test('B’s endpoint list never includes A’s endpoints', async () => {
  const list = await h.get('/api/v1/endpoints', { token: b.token });
  expectStatus(list, 200);
  const ids = idsOf(list.body.endpoints);
  assert.ok(!ids.includes(live.id) && !ids.includes(revoked.id));
  assert.equal(ids.length, 1);
});
