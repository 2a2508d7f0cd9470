// Pins the work-model fields on the HTTP create paths: priority, not_before and
// retry_backoff on POST /api/v1/endpoints/{ref}/todos, and a webhook's priority from the
// Switchboard-Priority header or the `priority` query parameter, a bad one a 400 naming it.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { apiHarness, expectError, expectStatus, makePeople, vend, PUBLIC_URL, type Reply } from './app.js';

const h = await apiHarness('api_work_model');
const { member } = await makePeople(h);
beforeEach(() => h.fresh());

const { endpoint } = await vend(h, member, { name: 'worked', queues: ['inbox'] });

async function webhookUrl(): Promise<string> {
  const res = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'inbox' },
  });
  expectStatus(res, 201, 'create webhook');
  return String(res.body.url).slice(PUBLIC_URL.length);
}

async function todo(id: string): Promise<Record<string, unknown>> {
  const res = await h.get(`/api/v1/todos/${id}`, { token: member.token });
  expectStatus(res, 200);
  return res.body.todo as Record<string, unknown>;
}

const push = (body: Record<string, unknown>): Promise<Reply> =>
  h.post(`/api/v1/endpoints/${endpoint.slug}/todos`, {
    token: member.token,
    body: { queue: 'inbox', title: 't', ...body },
  });

test('a pushed todo carries its priority, not_before and backoff, and answers them', async () => {
  const at = new Date(Date.now() + 3_600_000);
  const res = await push({
    priority: 7,
    not_before: at.toISOString(),
    retry_backoff: { base_seconds: 10, max_seconds: 60 },
  });
  expectStatus(res, 201);
  assert.equal(res.body.todo.priority, 7);
  assert.equal(Date.parse(res.body.todo.not_before), at.getTime());
  const row = await h.pool.query(`SELECT retry_base_seconds, retry_max_seconds, ready_at FROM todos WHERE id = $1`, [
    res.body.todo.id,
  ]);
  assert.deepEqual(row.rows[0], { retry_base_seconds: 10, retry_max_seconds: 60, ready_at: null });
  const plain = await push({});
  assert.equal(plain.body.todo.priority, 0);
  assert.equal(plain.body.todo.not_before, null);
});

test('a bad priority, not_before or backoff on push is a 400 naming the field', async () => {
  expectError(await push({ priority: 101 }), 400, 'invalid_argument', 'priority');
  expectError(await push({ not_before: 'soon' }), 400, 'invalid_argument', 'not_before');
  expectError(
    await push({ retry_backoff: { base_seconds: 9, max_seconds: 3 } }),
    400,
    'invalid_argument',
    'retry_backoff.max_seconds',
  );
});

test('a webhook delivery takes its priority from the Switchboard-Priority header or the priority query parameter', async () => {
  const url = await webhookUrl();
  const byHeader = await h.post(url, { body: { title: 'urgent' }, headers: { 'switchboard-priority': '90' } });
  expectStatus(byHeader, 201);
  assert.equal((await todo(byHeader.body.todo_id)).priority, 90);
  const byQuery = await h.post(`${url}?priority=-5`, { body: { title: 'later' } });
  expectStatus(byQuery, 201);
  assert.equal((await todo(byQuery.body.todo_id)).priority, -5);
  const plain = await h.post(url, { body: { title: 'plain' } });
  assert.equal((await todo(plain.body.todo_id)).priority, 0);
});

test('a bad webhook priority is a 400 naming the header or the query parameter, and makes no todo', async () => {
  const url = await webhookUrl();
  const before = await h.pool.query('SELECT count(*)::int AS n FROM todos');
  for (const bad of ['high', '101', '1.5', '']) {
    expectError(
      await h.post(url, { body: { title: 'x' }, headers: { 'switchboard-priority': bad } }),
      400,
      'invalid_argument',
      'Switchboard-Priority',
      bad,
    );
  }
  expectError(await h.post(`${url}?priority=-101`, { body: { title: 'x' } }), 400, 'invalid_argument', 'priority');
  const after = await h.pool.query('SELECT count(*)::int AS n FROM todos');
  assert.equal(after.rows[0].n, before.rows[0].n);
});
