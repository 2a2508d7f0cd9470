// Pins token webhooks: create, list, rotate, delete through /api/v1, and deliveries to POST /webhooks/{token} with their replay protection.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { DEFAULT_TITLE } from '../../src/webhooks/ingest.js';
import {
  apiHarness,
  expectError,
  expectStatus,
  makePeople,
  tableCounts,
  vend,
  PUBLIC_URL,
  type Reply,
  idsOf,
  byId,
} from './app.js';

const h = await apiHarness('api_webhooks');
const { member } = await makePeople(h);
beforeEach(() => h.fresh());

async function makeWebhook(ref: string, body: Record<string, unknown> = { queue: 'inbox' }) {
  const res = await h.post(`/api/v1/endpoints/${ref}/webhooks`, { token: member.token, body });
  expectStatus(res, 201, 'create webhook');
  return res.body as { webhook: { id: string; queue: string; name: string }; url: string };
}

/** POSTs a delivery to a webhook URL as printed (its path after the public URL). */
function deliver(url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  assert.ok(url.startsWith(PUBLIC_URL), url);
  return h.post(url.slice(PUBLIC_URL.length), { ...(body !== undefined ? { body } : {}), headers });
}

async function todo(id: string) {
  const res = await h.get(`/api/v1/todos/${id}`, { token: member.token });
  expectStatus(res, 200);
  return res.body.todo as Record<string, unknown>;
}

/** A redelivery's answer: the first delivery's todo and event, marked duplicate. */
function assertDuplicateOf(replay: Reply, first: Reply): void {
  assert.deepEqual(replay.body, {
    disposition: 'duplicate',
    todo_id: first.body.todo_id,
    todos: [{ id: first.body.todo_id, queue: first.body.todos[0].queue, created: false }],
    created: false,
    duplicate: true,
    event_id: first.body.event_id,
  });
}

async function todoCount(endpointId: string): Promise<number> {
  const res = await h.pool.query('SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1', [endpointId]);
  return Number(res.rows[0].n);
}

const { endpoint } = await vend(h, member, { name: 'hooked', queues: ['inbox', 'alerts'] });

test('create answers 201 with the webhook and its URL, the credential shown once', async () => {
  const res = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'alerts', name: 'Grafana' },
  });
  expectStatus(res, 201);
  assert.match(res.body.webhook.id, /^wh_/);
  assert.equal(res.body.webhook.queue, 'alerts');
  assert.equal(res.body.webhook.name, 'Grafana');
  assert.equal(res.body.webhook.last_delivery_at, null);
  assert.match(res.body.url, new RegExp(`^${PUBLIC_URL}/webhooks/sbw_[A-Za-z0-9_-]{43}$`));

  const list = await h.get(`/api/v1/endpoints/${endpoint.id}/webhooks`, { token: member.token });
  expectStatus(list, 200);
  const listed = byId(list.body.webhooks, res.body.webhook.id);
  assert.ok(listed);
  for (const key of ['id', 'name', 'queue', 'created_at', 'rotated_at', 'last_delivery_at'])
    assert.ok(key in listed, key);
  assert.ok(!list.text.includes(String(res.body.url).split('/').pop() ?? ''), 'the URL is not listed again');
});

test('create names the webhook after its queue by default and refuses a queue the endpoint lacks', async () => {
  const made = await makeWebhook(endpoint.slug, { queue: 'inbox' });
  assert.equal(made.webhook.name, 'inbox');
  const before = await tableCounts(h.pool);
  const res = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'deploys' },
  });
  expectError(res, 400, 'invalid_argument', 'queue');
  const missing = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, { token: member.token, body: {} });
  expectError(missing, 400, 'invalid_argument', 'queue');
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('a delivery creates a todo titled by the body’s title, the rest of the body its payload', async () => {
  const { url, webhook } = await makeWebhook(endpoint.slug, { queue: 'alerts' });
  const res = await deliver(url, { title: 'Disk full', host: 'db-1', level: 'critical' });
  expectStatus(res, 201);
  assert.equal(res.body.created, true);
  assert.match(res.body.todo_id, /^td_/);
  const made = await todo(res.body.todo_id);
  assert.equal(made.title, 'Disk full');
  assert.equal(made.queue, 'alerts');
  assert.equal(made.endpoint_id, endpoint.id);
  assert.deepEqual(made.payload, { host: 'db-1', level: 'critical' });
  assert.equal(made.source, 'webhook');
  assert.equal(made.state, 'pending');

  const list = await h.get(`/api/v1/endpoints/${endpoint.slug}/webhooks`, { token: member.token });
  const listed = byId(list.body.webhooks, webhook.id);
  assert.ok(listed.last_delivery_at, 'the delivery is stamped');
});

test('without a title in the body the X-Switchboard-Title header names the todo, else the default', async () => {
  const { url } = await makeWebhook(endpoint.slug);
  const byHeader = await deliver(url, { ref: 'main' }, { 'x-switchboard-title': 'Push to main' });
  expectStatus(byHeader, 201);
  const headed = await todo(byHeader.body.todo_id);
  assert.equal(headed.title, 'Push to main');
  assert.deepEqual(headed.payload, { ref: 'main' });

  const bodyWins = await deliver(url, { title: 'From the body' }, { 'x-switchboard-title': 'From the header' });
  assert.equal((await todo(bodyWins.body.todo_id)).title, 'From the body');

  const plain = await deliver(url, { ref: 'dev' });
  expectStatus(plain, 201);
  const defaulted = await todo(plain.body.todo_id);
  assert.equal(defaulted.title, DEFAULT_TITLE);
  assert.equal(defaulted.title, 'Webhook delivery');

  const list = await deliver(url, [1, 2, 3]);
  expectStatus(list, 201);
  const listed = await todo(list.body.todo_id);
  assert.equal(listed.title, 'Webhook delivery');
  assert.deepEqual(listed.payload, [1, 2, 3]);
});

test('a delivery whose title is not a string answers 400 naming title and makes no todo', async () => {
  const { url } = await makeWebhook(endpoint.slug);
  const before = await tableCounts(h.pool);
  expectError(await deliver(url, { title: 42 }), 400, 'invalid_argument', 'title');
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('a delivery whose payload holds a character jsonb cannot store answers 400 naming payload', async () => {
  const { url } = await makeWebhook(endpoint.slug);
  const before = await tableCounts(h.pool);
  expectError(await deliver(url, { note: 'x\ud800' }), 400, 'invalid_argument', 'payload');
  expectError(await deliver(url, { note: 'x\u0000' }), 400, 'invalid_argument', 'payload');
  assert.deepEqual(await tableCounts(h.pool), before);
});

for (const header of ['idempotency-key', 'webhook-id', 'x-github-delivery', 'x-delivery-id']) {
  test(`a delivery replayed with the same ${header} answers 200 created: false with the same todo, even after it was canceled`, async () => {
    const { endpoint: ep } = await vend(h, member, { name: `replay ${header}` });
    const { url } = await makeWebhook(ep.slug);
    const first = await deliver(url, { title: 'Deploy 7' }, { [header]: 'delivery-7' });
    expectStatus(first, 201);
    assert.equal(first.body.created, true);

    const replay = await deliver(url, { title: 'Deploy 7 (again)' }, { [header]: 'delivery-7' });
    expectStatus(replay, 200);
    assertDuplicateOf(replay, first);

    expectStatus(await h.post(`/api/v1/todos/${first.body.todo_id}/cancel`, { token: member.token }), 200);
    const late = await deliver(url, { title: 'Deploy 7 (late)' }, { [header]: 'delivery-7' });
    expectStatus(late, 200);
    assertDuplicateOf(late, first);
    assert.equal(await todoCount(ep.id), 1);
    assert.equal((await todo(first.body.todo_id)).title, 'Deploy 7');

    const other = await deliver(url, { title: 'Deploy 8' }, { [header]: 'delivery-8' });
    expectStatus(other, 201);
    assert.equal(await todoCount(ep.id), 2);
  });
}

test('racing replays of one delivery make exactly one todo', async () => {
  const { endpoint: ep } = await vend(h, member, { name: 'race' });
  const { url } = await makeWebhook(ep.slug);
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => deliver(url, { title: 'Race' }, { 'idempotency-key': 'same' })),
  );
  const created = answers.filter((a) => a.status === 201);
  assert.equal(created.length, 1, answers.map((a) => `${a.status} ${a.text}`).join('\n'));
  for (const a of answers) assert.equal(a.body.todo_id, created[0]?.body.todo_id);
  assert.equal(await todoCount(ep.id), 1);
});

test('Idempotency-Key wins over webhook-id, which wins over X-GitHub-Delivery, which wins over X-Delivery-Id', async () => {
  const { endpoint: ep } = await vend(h, member, { name: 'precedence' });
  const { url } = await makeWebhook(ep.slug);
  const all = { 'idempotency-key': 'k', 'webhook-id': 'w', 'x-github-delivery': 'g', 'x-delivery-id': 'd' };
  const first = await deliver(url, { title: 'all four' }, all);
  expectStatus(first, 201);
  // Each lower header alone is a different delivery: the first one only recorded "k".
  for (const [name, id] of [
    ['webhook-id', 'w'],
    ['x-github-delivery', 'g'],
    ['x-delivery-id', 'd'],
  ] as const) {
    expectStatus(await deliver(url, { title: name }, { [name]: id }), 201, name);
  }
  // With the top header missing, the next one present is the id: "w" is now known.
  const { 'idempotency-key': _k, ...withoutKey } = all;
  const second = await deliver(url, { title: 'no key' }, withoutKey);
  expectStatus(second, 200);
  assert.equal(await todoCount(ep.id), 4);
  const replay = await deliver(url, { title: 'again' }, { ...all, 'webhook-id': 'other' });
  assertDuplicateOf(replay, first);
});

test('an empty webhook-id answers 400 naming the header and makes no todo', async () => {
  const { url } = await makeWebhook(endpoint.slug);
  const before = await tableCounts(h.pool);
  expectError(await deliver(url, { title: 'x' }, { 'webhook-id': '' }), 400, 'invalid_argument', 'webhook-id');
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('an empty Idempotency-Key answers 400 and makes no todo', async () => {
  const { url } = await makeWebhook(endpoint.slug);
  const before = await tableCounts(h.pool);
  expectError(await deliver(url, { title: 'x' }, { 'idempotency-key': '' }), 400, 'invalid_argument');
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('rotate stops the old URL at once and the new one works', async () => {
  const { url, webhook } = await makeWebhook(endpoint.slug);
  expectStatus(await deliver(url, { title: 'before' }), 201);
  const rotated = await h.post(`/api/v1/webhooks/${webhook.id}/rotate`, { token: member.token });
  expectStatus(rotated, 200);
  assert.equal(rotated.body.webhook.id, webhook.id);
  assert.ok(rotated.body.webhook.rotated_at);
  assert.notEqual(rotated.body.url, url);
  assert.match(rotated.body.url, new RegExp(`^${PUBLIC_URL}/webhooks/sbw_`));

  const before = await tableCounts(h.pool);
  expectError(await deliver(url, { title: 'old url' }), 404, 'not_found');
  assert.deepEqual(await tableCounts(h.pool), before);
  expectStatus(await deliver(rotated.body.url, { title: 'new url' }), 201);
});

test('delete answers deleted: true and the URL answers 404 from then on', async () => {
  const { url, webhook } = await makeWebhook(endpoint.slug);
  const res = await h.delete(`/api/v1/webhooks/${webhook.id}`, { token: member.token });
  expectStatus(res, 200);
  assert.deepEqual(res.body, { deleted: true });
  const before = await tableCounts(h.pool);
  expectError(await deliver(url, { title: 'gone' }), 404, 'not_found');
  assert.deepEqual(await tableCounts(h.pool), before);
  expectError(await h.delete(`/api/v1/webhooks/${webhook.id}`, { token: member.token }), 404, 'not_found');
  expectError(await h.post(`/api/v1/webhooks/${webhook.id}/rotate`, { token: member.token }), 404, 'not_found');
  const list = await h.get(`/api/v1/endpoints/${endpoint.slug}/webhooks`, { token: member.token });
  assert.ok(!idsOf(list.body.webhooks).includes(webhook.id));
});

test('a revoked endpoint’s webhook answers 404 and makes no todo', async () => {
  const { endpoint: ep } = await vend(h, member, { name: 'revoked hook' });
  const { url } = await makeWebhook(ep.slug);
  expectStatus(await h.post(`/api/v1/endpoints/${ep.slug}/revoke`, { token: member.token }), 200);
  const before = await tableCounts(h.pool);
  expectError(await deliver(url, { title: 'after revoke' }), 404, 'not_found');
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('an expired endpoint’s webhook answers 404 and makes no todo', async () => {
  const { endpoint: ep } = await vend(h, member, { name: 'expired hook' });
  const { url } = await makeWebhook(ep.slug);
  await h.pool.query(`UPDATE endpoints SET expires_at = now() - interval '1 second' WHERE id = $1`, [ep.id]);
  const before = await tableCounts(h.pool);
  expectError(await deliver(url, { title: 'after expiry' }), 404, 'not_found');
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('an unknown webhook URL answers 404 the same way as a rotated one', async () => {
  const { url, webhook } = await makeWebhook(endpoint.slug);
  expectStatus(await h.post(`/api/v1/webhooks/${webhook.id}/rotate`, { token: member.token }), 200);
  const rotated = await deliver(url, { title: 'x' });
  const unknown = await h.post(`/webhooks/sbw_${'A'.repeat(43)}`, { body: { title: 'x' } });
  expectError(unknown, 404, 'not_found');
  assert.deepEqual(unknown.body, rotated.body);
});
