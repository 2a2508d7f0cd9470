// Pins the per-human quotas: at each limit the next create is refused naming the quota,
// its value and its setting, and writes nothing — failed_precondition (409, not worth
// retrying until something is deleted) for the things a human owns, resource_exhausted
// (429 with Retry-After: work drains) for live todos; a concurrent burst of vends does not
// pass the endpoints quota; a bulk create counts every item.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { DEFAULT_QUOTAS } from '../../src/domain/quotas.js';
import { apiHarness, expectError, expectStatus, makePeople, vend, type Reply } from './app.js';

// Small quotas, set as an operator would (the defaults are far higher).
const h = await apiHarness('api_quotas', undefined, {
  SWITCHBOARD_QUOTA_ENDPOINTS: '3',
  SWITCHBOARD_QUOTA_LIVE_TODOS: '5',
  SWITCHBOARD_QUOTA_API_TOKENS: '3',
  SWITCHBOARD_QUOTA_WEBHOOKS: '2',
  SWITCHBOARD_QUOTA_NOTIFY_HOOKS: '2',
  SWITCHBOARD_QUOTA_SCHEDULES: '2',
  SWITCHBOARD_PUSH_ALLOW_HTTP: 'on',
  SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: '127.0.0.1',
});
const { admin, member, other } = await makePeople(h);

/** A refusal at an owned-thing quota: 409, nothing to wait for, no Retry-After. */
function expectQuota(res: Reply, setting: string, limit: number, words: RegExp): void {
  expectError(res, 409, 'failed_precondition');
  assert.match(res.body.error.message, words);
  assert.ok(String(res.body.error.message).includes(`(${setting})`), String(res.body.error.message));
  assert.deepEqual(res.body.error.details, { quota: setting, limit });
  assert.equal(res.headers['retry-after'], undefined);
}

/** A refusal at the live-todo quota: 429 with Retry-After, since finished work frees room. */
function expectTodoQuota(res: Reply, limit: number, words: RegExp): void {
  expectError(res, 429, 'resource_exhausted');
  assert.match(res.body.error.message, words);
  assert.ok(String(res.body.error.message).includes('(SWITCHBOARD_QUOTA_LIVE_TODOS)'), String(res.body.error.message));
  assert.deepEqual(res.body.error.details, {
    quota: 'SWITCHBOARD_QUOTA_LIVE_TODOS',
    limit,
    retry_after_seconds: 60,
  });
  assert.equal(res.headers['retry-after'], '60');
}

test('past SWITCHBOARD_QUOTA_ENDPOINTS a vend answers failed_precondition naming it; another human is not held back', async () => {
  for (let i = 0; i < 3; i++) await vend(h, other);
  const refused = await h.post('/api/v1/endpoints', { token: other.token, body: { name: 'one too many' } });
  expectQuota(refused, 'SWITCHBOARD_QUOTA_ENDPOINTS', 3, /^quota: at most 3 endpoints per human/);
  const listed = await h.get('/api/v1/endpoints', { token: other.token });
  assert.equal(listed.body.endpoints.length, 3);
  await vend(h, admin);
});

test('a concurrent burst of vends does not pass the endpoints quota', async () => {
  const human = (
    await h.post('/api/v1/humans', {
      token: admin.token,
      body: { email: 'racer@example.test', display_name: 'Racer', password: 'correct horse battery staple' },
    })
  ).body.human as { id: string };
  const deps = { db: h.pool, publicUrl: 'http://switchboard.test', quotas: { ...DEFAULT_QUOTAS, endpoints: 3 } };
  const outcomes = await Promise.allSettled(
    Array.from({ length: 12 }, (_, i) => vendEndpoint(deps, human.id, { name: `race ${i}` }, new Date())),
  );
  const made = outcomes.filter((o) => o.status === 'fulfilled').length;
  assert.equal(made, 3, outcomes.map((o) => (o.status === 'rejected' ? String(o.reason) : 'ok')).join('; '));
  for (const o of outcomes) {
    if (o.status === 'rejected') assert.equal((o.reason as { code?: string }).code, 'failed_precondition');
  }
  const rows = await h.pool.query(`SELECT count(*)::int AS n FROM endpoints WHERE human_id = $1`, [human.id]);
  assert.equal(rows.rows[0].n, 3);
});

test('past SWITCHBOARD_QUOTA_LIVE_TODOS a create answers resource_exhausted with Retry-After; a bulk counts every item; finished todos free room', async () => {
  const ep = await vend(h, member);
  const url = `/api/v1/endpoints/${ep.endpoint.slug}/todos`;
  const bulk = (n: number) => ({ todos: Array.from({ length: n }, (_, i) => ({ queue: 'inbox', title: `t${i}` })) });
  expectStatus(await h.post(url, { token: member.token, body: bulk(4) }), 201);
  const tooBig = await h.post(url, { token: member.token, body: bulk(2) });
  expectTodoQuota(tooBig, 5, /^quota: at most 5 live todos per endpoint/);
  const one = await h.post(url, { token: member.token, body: { queue: 'inbox', title: 'fifth' } });
  expectStatus(one, 201);
  const sixth = await h.post(url, { token: member.token, body: { queue: 'inbox', title: 'sixth' } });
  expectTodoQuota(sixth, 5, /live todos per endpoint/);
  const todos = await h.pool.query(`SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1`, [ep.endpoint.id]);
  assert.equal(todos.rows[0].n, 5, 'the refused creates wrote nothing');
  expectStatus(await h.post(`/api/v1/todos/${one.body.todo.id}/cancel`, { token: member.token, body: {} }), 200);
  expectStatus(await h.post(url, { token: member.token, body: { queue: 'inbox', title: 'room again' } }), 201);
});

test('past SWITCHBOARD_QUOTA_API_TOKENS minting a token answers failed_precondition; login tokens count', async () => {
  // The member holds one login token (makePeople); two more workflow tokens reach 3.
  for (let i = 0; i < 2; i++) {
    expectStatus(
      await h.post('/api/v1/tokens', { token: member.token, body: { name: `wf${i}`, kind: 'workflow' } }),
      201,
    );
  }
  const refused = await h.post('/api/v1/tokens', { token: member.token, body: { name: 'wf-x', kind: 'workflow' } });
  expectQuota(refused, 'SWITCHBOARD_QUOTA_API_TOKENS', 3, /^quota: at most 3 live API tokens per human/);
});

test('past SWITCHBOARD_QUOTA_WEBHOOKS, _NOTIFY_HOOKS and _SCHEDULES the create answers failed_precondition, counted over the human’s endpoints', async () => {
  const [a, b] = [await vend(h, admin), await vend(h, admin)];
  const webhook = (slug: string) =>
    h.post(`/api/v1/endpoints/${slug}/webhooks`, { token: admin.token, body: { queue: 'inbox' } });
  expectStatus(await webhook(a.endpoint.slug), 201);
  expectStatus(await webhook(b.endpoint.slug), 201);
  expectQuota(await webhook(a.endpoint.slug), 'SWITCHBOARD_QUOTA_WEBHOOKS', 2, /at most 2 webhooks per human/);

  const hook = (slug: string) =>
    h.post(`/api/v1/endpoints/${slug}/notify-hooks`, { token: admin.token, body: { url: 'http://127.0.0.1:9/hook' } });
  expectStatus(await hook(a.endpoint.slug), 201);
  expectStatus(await hook(b.endpoint.slug), 201);
  expectQuota(await hook(b.endpoint.slug), 'SWITCHBOARD_QUOTA_NOTIFY_HOOKS', 2, /at most 2 notify hooks per human/);

  const schedule = (slug: string) =>
    h.post(`/api/v1/endpoints/${slug}/schedules`, {
      token: admin.token,
      body: { queue: 'inbox', cron: '0 9 * * 1-5', tz: 'UTC', title: 'standup' },
    });
  expectStatus(await schedule(a.endpoint.slug), 201);
  expectStatus(await schedule(a.endpoint.slug), 201);
  expectQuota(await schedule(b.endpoint.slug), 'SWITCHBOARD_QUOTA_SCHEDULES', 2, /at most 2 schedules per human/);
});

test('a concurrent burst of creates passes the live-todo quota by at most its own size (no lock on the create path), and the next create is refused', async () => {
  const ep = await vend(h, member);
  const url = `/api/v1/endpoints/${ep.endpoint.slug}/todos`;
  expectStatus(await h.post(url, { token: member.token, body: { queue: 'inbox', title: 'first' } }), 201);
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) => h.post(url, { token: member.token, body: { queue: 'inbox', title: `c${i}` } })),
  );
  for (const a of answers) if (a.status !== 201) expectTodoQuota(a, 5, /live todos/);
  const todos = await h.pool.query(`SELECT count(*)::int AS n FROM todos WHERE endpoint_id = $1`, [ep.endpoint.id]);
  assert.ok(todos.rows[0].n >= 5 && todos.rows[0].n <= 9, String(todos.rows[0].n));
  const after = await h.post(url, { token: member.token, body: { queue: 'inbox', title: 'after the burst' } });
  expectTodoQuota(after, 5, /live todos/);
});
