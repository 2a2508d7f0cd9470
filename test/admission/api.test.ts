// Pins the operator API of admission (docs/design/admission.md, "Wire shapes"): PUT as a
// full replace with field-named errors, GET of one policy (status, windows, audit) and of
// all a human's, DELETE with the audit kept, and 404 for unknown, malformed and foreign
// scopes on every route.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiHarness, expectError, expectStatus, makePeople, push, vend } from '../api/app.js';

const h = await apiHarness('admission_api');
const { member, other } = await makePeople(h);
const mine = await vend(h, member, { queues: ['inbox', 'batch'] });
const theirs = await vend(h, other, { queues: ['inbox'] });
const scope = `endpoint:${mine.endpoint.slug}`;
const daily = {
  max_in_flight: 2,
  max_claims_per_window: 10,
  window: { period: 'day', tz: 'Europe/London', start: '06:00' },
};

test('PUT creates then fully replaces a policy, and GET shows status, windows and audit', async () => {
  const created = await h.request('PUT', `/api/v1/admission/${scope}/inbox`, { token: member.token, body: daily });
  expectStatus(created, 201, 'create');
  assert.equal(created.body.scope, scope);
  assert.deepEqual(created.body.policy.window, { period: 'day', tz: 'Europe/London', start: '06:00' });
  assert.equal(created.body.status.state, 'admissible');
  const replaced = await h.request('PUT', `/api/v1/admission/endpoint:${mine.endpoint.id}/inbox`, {
    token: member.token,
    body: { max_in_flight: 1 },
  });
  expectStatus(replaced, 200, 'replace');
  assert.equal(replaced.body.policy.max_claims_per_window, null, 'a full replace drops what the body leaves out');
  assert.equal(replaced.body.policy.window, null);
  await push(h, member, mine.endpoint.slug);
  const one = await h.get(`/api/v1/admission/${scope}/inbox`, { token: member.token });
  expectStatus(one, 200, 'show');
  assert.equal(one.body.pending, 1);
  assert.deepEqual(one.body.windows, []);
  assert.deepEqual(
    (one.body.audit as Array<{ action: string; actor_human_id: string; actor_endpoint_id: unknown }>).map((a) => [
      a.action,
      a.actor_human_id === member.human.id,
      a.actor_endpoint_id,
    ]),
    [
      ['update', true, null],
      ['create', true, null],
    ],
  );
  const all = await h.get('/api/v1/admission', { token: member.token });
  expectStatus(all, 200, 'list');
  assert.deepEqual(
    (all.body.policies as Array<{ scope: string; queue: string }>).map((p) => `${p.scope}/${p.queue}`),
    [`${scope}/inbox`],
  );
  const none = await h.get('/api/v1/admission', { token: other.token });
  assert.deepEqual(none.body.policies, []);
});

test('DELETE removes the policy and keeps its audit', async () => {
  expectStatus(await h.request('PUT', `/api/v1/admission/${scope}/batch`, { token: member.token, body: daily }), 201);
  const gone = await h.delete(`/api/v1/admission/${scope}/batch`, { token: member.token });
  expectStatus(gone, 200, 'delete');
  assert.deepEqual(gone.body, { scope, queue: 'batch', deleted: true });
  expectError(await h.get(`/api/v1/admission/${scope}/batch`, { token: member.token }), 404, 'not_found');
  expectError(await h.delete(`/api/v1/admission/${scope}/batch`, { token: member.token }), 404, 'not_found');
  const audit = await h.pool.query<{ action: string }>(
    `SELECT action FROM admission_policy_audit WHERE queue = 'batch' ORDER BY id`,
  );
  assert.deepEqual(
    audit.rows.map((r) => r.action),
    ['create', 'delete'],
  );
});

test('a bad body is refused naming its field, and nothing is written', async () => {
  const cases: Array<[unknown, string]> = [
    [{ max_in_flight: -1 }, 'max_in_flight'],
    [{ max_in_flight: 10_001 }, 'max_in_flight'],
    [{ max_in_flight: 1.5 }, 'max_in_flight'],
    [{ max_claims_per_window: 5 }, 'window'],
    [{ max_claims_per_window: 1_000_001, window: daily.window }, 'max_claims_per_window'],
    [{ max_claims_per_window: 5, window: { period: 'day', tz: 'Mars/Olympus', start: '00:00' } }, 'window.tz'],
    [{ max_claims_per_window: 5, window: { period: 'week', tz: 'UTC', start: '00:00' } }, 'window.weekday'],
    [{ max_claims_per_window: 5, window: { period: 'day', tz: 'UTC', start: '24:00' } }, 'window.start'],
    [{ max_claims_per_window: 5, window: { period: 'month', tz: 'UTC', start: '00:00' } }, 'window.period'],
    [{ max_in_flight: 1, burst: 3 }, 'burst'],
    [{}, 'max_in_flight'],
    [[1], 'body'],
  ];
  for (const [body, field] of cases) {
    const res = await h.request('PUT', `/api/v1/admission/${scope}/batch`, { token: member.token, body });
    expectError(res, 400, 'invalid_argument', field, JSON.stringify(body));
  }
  const outside = await h.request('PUT', `/api/v1/admission/${scope}/nope`, { token: member.token, body: daily });
  expectError(outside, 400, 'invalid_argument', 'queue');
  const rows = await h.pool.query(`SELECT count(*)::int AS n FROM admission_policies WHERE queue IN ('batch', 'nope')`);
  assert.equal(rows.rows[0].n, 0);
});

test('unknown, malformed and foreign scopes answer 404 alike on every route', async () => {
  expectStatus(
    await h.request('PUT', `/api/v1/admission/endpoint:${theirs.endpoint.slug}/inbox`, {
      token: other.token,
      body: daily,
    }),
    201,
  );
  const scopes = [
    `endpoint:${theirs.endpoint.slug}`,
    `endpoint:${theirs.endpoint.id}`,
    'endpoint:nobody-12345678',
    'team:t_1',
    mine.endpoint.slug,
    'endpoint:',
  ];
  for (const s of scopes) {
    const url = `/api/v1/admission/${encodeURIComponent(s)}/inbox`;
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', daily],
      ['DELETE', undefined],
    ] as const) {
      const res = await h.request(method, url, { token: member.token, ...(body ? { body } : {}) });
      expectError(res, 404, 'not_found', undefined, `${method} ${s}`);
      assert.equal(res.body.error.message, `scope ${s} not found`, 'the answer only echoes the request');
    }
  }
  const still = await h.get(`/api/v1/admission/endpoint:${theirs.endpoint.slug}/inbox`, { token: other.token });
  expectStatus(still, 200, 'the owner still sees it unchanged');
  assert.equal(still.body.policy.max_in_flight, 2);
});
