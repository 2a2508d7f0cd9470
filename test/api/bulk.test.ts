// Pins POST /api/v1/endpoints/{ref}/todos/bulk (ownership, answers, errors naming fields,
// the audit) and the operator API limits from settings: RateLimit headers on answers, 429
// with Retry-After past the burst, and a bulk action counting once.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Harness, PUBLIC_URL, apiHarness, expectError, expectStatus, makePeople, push, vend } from './app.js';

const h = await apiHarness('api_bulk');
const { member, other } = await makePeople(h);
const ep = await vend(h, member, { queues: ['inbox', 'later'] });
const bulkUrl = `/api/v1/endpoints/${ep.endpoint.slug}/todos/bulk`;

test('a bulk cancel answers matched and changed, and the audit names who ran it with which filter', async () => {
  const kept = await push(h, member, ep.endpoint.slug, { queue: 'later', title: 'keep me' });
  for (let i = 0; i < 3; i++) await push(h, member, ep.endpoint.slug, { title: `sweep ${i}` });
  const dry = await h.post(bulkUrl, {
    token: member.token,
    body: { action: 'cancel', filter: { queue: 'inbox' }, dry_run: true },
  });
  expectStatus(dry, 200);
  assert.deepEqual(dry.body, { action: 'cancel', dry_run: true, matched: 3, changed: 0 });
  const run = await h.post(bulkUrl, { token: member.token, body: { action: 'cancel', filter: { queue: 'inbox' } } });
  expectStatus(run, 200);
  assert.deepEqual(run.body, { action: 'cancel', dry_run: false, matched: 3, changed: 3 });
  const left = await h.get(`/api/v1/todos/${kept.id}`, { token: member.token });
  assert.equal(left.body.todo.state, 'pending', 'another queue is untouched');
  const audit = await h.pool.query(
    `SELECT actor_human_id, action, filter, matched, changed FROM todo_bulk_audit WHERE endpoint_id = $1`,
    [ep.endpoint.id],
  );
  assert.deepEqual(audit.rows, [
    { actor_human_id: member.human.id, action: 'cancel', filter: { queue: 'inbox' }, matched: 3, changed: 3 },
  ]);
});

test("another human's endpoint answers 404 like an unknown one, and nothing is canceled", async () => {
  const todo = await push(h, member, ep.endpoint.slug, { title: 'mine' });
  const res = await h.post(bulkUrl, { token: other.token, body: { action: 'cancel', filter: {} } });
  expectError(res, 404, 'not_found');
  const unknown = await h.post('/api/v1/endpoints/nobody/todos/bulk', {
    token: other.token,
    body: { action: 'cancel', filter: {} },
  });
  expectError(unknown, 404, 'not_found');
  assert.equal((await h.get(`/api/v1/todos/${todo.id}`, { token: member.token })).body.todo.state, 'pending');
  expectError(await h.post(bulkUrl, { body: { action: 'cancel', filter: {} } }), 401, 'unauthenticated');
});

test('bad bulk input answers 400 naming the field', async () => {
  const bad = async (body: unknown, field: string) =>
    expectError(await h.post(bulkUrl, { token: member.token, body }), 400, 'invalid_argument', field, field);
  await bad({ action: 'purge', filter: {} }, 'action');
  await bad({ action: 'cancel', filter: { state: 'done' } }, 'filter.state');
  await bad({ action: 'cancel', filter: { created_before: '31/01/2026' } }, 'filter.created_before');
  await bad({ action: 'retry', filter: { queue: 'elsewhere' } }, 'filter.queue');
  await bad({ action: 'retry' }, 'filter');
});

test('every API answer carries RateLimit-Policy and RateLimit with the default limits', async (t) => {
  await h.fresh();
  h.frozenAt = new Date();
  t.after(() => {
    h.frozenAt = null;
  });
  const res = await h.get('/api/v1/endpoints', { token: member.token });
  expectStatus(res, 200);
  assert.equal(res.headers['ratelimit-policy'], '"ip";q=800;w=2, "cred";q=400;w=2');
  assert.equal(res.headers['ratelimit'], '"ip";r=799;t=1, "cred";r=399;t=1');
  const refused = await h.get('/api/v1/endpoints');
  expectStatus(refused, 401);
  assert.match(String(refused.headers['ratelimit']), /^"ip";r=798;t=1$/);
});

test('a low configured limit answers 429 with Retry-After, and a bulk action over many rows counts once', async () => {
  const limited = await new Harness(h.pool).init({
    env: {
      SWITCHBOARD_PUBLIC_URL: PUBLIC_URL,
      SWITCHBOARD_API_RATE: '1',
      SWITCHBOARD_API_BURST: '3',
    },
  });
  limited.frozenAt = new Date();
  try {
    await h.pool.query(
      `INSERT INTO todos (endpoint_id, id, queue, title, state, ready_at)
       SELECT $1, 'td_bulk' || lpad(g::text, 8, '0'), 'later', 'many ' || g, 'pending', now()
         FROM generate_series(1, 600) g`,
      [ep.endpoint.id],
    );
    const bulk = await limited.post(bulkUrl, {
      token: member.token,
      body: { action: 'cancel', filter: { queue: 'later', q: 'many' } },
    });
    expectStatus(bulk, 200);
    assert.equal(bulk.body.changed, 600);
    assert.equal(bulk.headers['ratelimit-policy'], '"ip";q=800;w=2, "cred";q=3;w=3');
    assert.match(String(bulk.headers['ratelimit']), /"cred";r=2;t=1$/, 'the bulk request took one token');
    expectStatus(await limited.get('/api/v1/endpoints', { token: member.token }), 200);
    expectStatus(await limited.get('/api/v1/endpoints', { token: member.token }), 200);
    const refused = await limited.get('/api/v1/endpoints', { token: member.token });
    expectError(refused, 429, 'resource_exhausted');
    assert.equal(refused.headers['retry-after'], '1');
    assert.match(String(refused.headers['ratelimit']), /"cred";r=0;t=3$/);
    expectStatus(await limited.get('/api/v1/endpoints', { token: other.token }), 200, 'another credential');
  } finally {
    await limited.close();
  }
});
