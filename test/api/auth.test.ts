// Pins who may call each /api/v1 route: 401 for a missing, bad, revoked or expired credential, 403 by role and token kind, and the rate limits.

import assert from 'node:assert/strict';
import { beforeEach, test, type TestContext } from 'node:test';
import { newId, newSessionId } from '../../src/domain/ids.js';
import { insertSession } from '../../src/store/sessions.js';
import {
  apiHarness,
  expectError,
  expectStatus,
  login,
  makePeople,
  push,
  snapshot,
  vend,
  PASSWORD,
  type Reply,
} from './app.js';

// The limits these tests count against, set as an operator would (the defaults are far higher).
const h = await apiHarness('api_auth', undefined, {
  SWITCHBOARD_API_RATE: '20',
  SWITCHBOARD_API_BURST: '40',
  SWITCHBOARD_API_RATE_PER_IP: '50',
  SWITCHBOARD_API_BURST_PER_IP: '100',
});
const { admin, member, other } = await makePeople(h);
beforeEach(() => h.fresh());

/** Rate-limit tests count requests, not seconds: the clock stands still so a slow machine refills nothing. */
function freezeClock(t: TestContext): void {
  h.frozenAt = new Date();
  t.after(() => {
    h.frozenAt = null;
  });
}

// Real targets for every route, all the member's, so a route that skipped its check would act.
const ep = await vend(h, member);
const todo = await push(h, member, ep.endpoint.slug);
const hook = await h.post(`/api/v1/endpoints/${ep.endpoint.slug}/webhooks`, {
  token: member.token,
  body: { queue: 'inbox' },
});
expectStatus(hook, 201, 'webhook');
const webhookId: string = hook.body.webhook.id;
const delivered = await h.post(String(hook.body.url).replace(/^https?:\/\/[^/]+/, ''), { body: { title: 'an event' } });
expectStatus(delivered, 201, 'delivery');
const eventId: string = delivered.body.event_id;
const spareToken = await login(h, member.email);
await h.fresh();

type Route = { method: string; url: string; body?: unknown };

const PUSH: Route = {
  method: 'POST',
  url: `/api/v1/endpoints/${ep.endpoint.slug}/todos`,
  body: { queue: 'inbox', title: 'x' },
};

// A live MCP session of the member's endpoint, for the message queue routes.
const mcpSession = await insertSession(h.pool, {
  endpointId: ep.endpoint.id,
  id: newSessionId(),
  clientName: 'test',
  clientVersion: '1',
  instance: 'test',
});
const QUEUE = `/api/v1/sessions/${mcpSession.id}/queue`;
const ENTRY = `${QUEUE}/00000000-0000-4000-8000-000000000000`;
/** Workflow tokens may queue messages too (as queued_by workflow). */
const QUEUE_ADD: Route = { method: 'POST', url: QUEUE, body: { content: 'x' } };

/** Every /api/v1 route that needs a credential. */
const ROUTES: Route[] = [
  { method: 'POST', url: '/api/v1/auth/logout' },
  { method: 'GET', url: '/api/v1/whoami' },
  { method: 'GET', url: '/api/v1/tokens' },
  { method: 'POST', url: '/api/v1/tokens', body: { name: 'automation' } },
  { method: 'DELETE', url: `/api/v1/tokens/${spareToken.tokenId}` },
  { method: 'GET', url: '/api/v1/humans' },
  { method: 'POST', url: '/api/v1/humans', body: { email: 'new@example.test', password: PASSWORD } },
  { method: 'GET', url: `/api/v1/humans/${member.human.id}` },
  { method: 'PATCH', url: `/api/v1/humans/${member.human.id}`, body: { state: 'disabled' } },
  { method: 'DELETE', url: `/api/v1/humans/${member.human.id}` },
  { method: 'POST', url: `/api/v1/humans/${member.human.id}/reset` },
  { method: 'GET', url: `/api/v1/humans/${member.human.id}/audit` },
  { method: 'DELETE', url: `/api/v1/humans/${member.human.id}/oidc` },
  { method: 'GET', url: `/api/v1/humans/${member.human.id}/tokens` },
  { method: 'DELETE', url: `/api/v1/humans/${member.human.id}/tokens/${spareToken.tokenId}` },
  { method: 'POST', url: '/api/v1/me/password', body: { current: PASSWORD, new: 'another long password' } },
  { method: 'POST', url: '/api/v1/endpoints', body: { name: 'x' } },
  { method: 'GET', url: '/api/v1/endpoints' },
  { method: 'GET', url: `/api/v1/endpoints/${ep.endpoint.slug}` },
  { method: 'PATCH', url: `/api/v1/endpoints/${ep.endpoint.slug}`, body: { accept_agent_messages: true } },
  { method: 'POST', url: `/api/v1/endpoints/${ep.endpoint.slug}/rotate` },
  { method: 'POST', url: `/api/v1/endpoints/${ep.endpoint.slug}/revoke` },
  { method: 'DELETE', url: `/api/v1/endpoints/${ep.endpoint.slug}` },
  PUSH,
  { method: 'GET', url: `/api/v1/endpoints/${ep.endpoint.slug}/todos` },
  { method: 'GET', url: `/api/v1/todos/${todo.id}` },
  { method: 'POST', url: `/api/v1/todos/${todo.id}/retry` },
  { method: 'POST', url: `/api/v1/todos/${todo.id}/cancel` },
  { method: 'POST', url: `/api/v1/todos/${todo.id}/answer`, body: { text: 'yes' } },
  { method: 'POST', url: `/api/v1/endpoints/${ep.endpoint.slug}/todos/bulk`, body: { action: 'cancel', filter: {} } },
  { method: 'POST', url: `/api/v1/endpoints/${ep.endpoint.slug}/webhooks`, body: { queue: 'inbox' } },
  { method: 'GET', url: `/api/v1/endpoints/${ep.endpoint.slug}/webhooks` },
  { method: 'POST', url: `/api/v1/webhooks/${webhookId}/rotate` },
  { method: 'POST', url: `/api/v1/webhooks/${webhookId}/secret`, body: {} },
  { method: 'GET', url: `/api/v1/webhooks/${webhookId}/rules` },
  { method: 'PUT', url: `/api/v1/webhooks/${webhookId}/rules`, body: { rules: [] } },
  { method: 'POST', url: `/api/v1/webhooks/${webhookId}/rules/test`, body: { payload: {} } },
  { method: 'PUT', url: `/api/v1/webhooks/${webhookId}/trusted-actors`, body: { actors: ['alice'] } },
  { method: 'DELETE', url: `/api/v1/webhooks/${webhookId}/trusted-actors` },
  { method: 'GET', url: '/api/v1/quarantine' },
  { method: 'GET', url: '/api/v1/quarantine/qi_01M8NK6R97BHCY3TA06992VD2A' },
  { method: 'POST', url: '/api/v1/quarantine/qi_01M8NK6R97BHCY3TA06992VD2A/release' },
  { method: 'POST', url: '/api/v1/quarantine/qi_01M8NK6R97BHCY3TA06992VD2A/discard', body: { reason: 'x' } },
  { method: 'GET', url: '/api/v1/grants' },
  { method: 'POST', url: '/api/v1/grants', body: { from: ep.endpoint.slug, to: 'elsewhere', queues: ['inbox'] } },
  { method: 'GET', url: '/api/v1/grants/gr_01M8NK6R97BHCY3TA06992VD2A' },
  { method: 'POST', url: '/api/v1/grants/gr_01M8NK6R97BHCY3TA06992VD2A/approve' },
  { method: 'POST', url: '/api/v1/grants/gr_01M8NK6R97BHCY3TA06992VD2A/deny' },
  { method: 'DELETE', url: '/api/v1/grants/gr_01M8NK6R97BHCY3TA06992VD2A' },
  { method: 'DELETE', url: `/api/v1/webhooks/${webhookId}` },
  { method: 'GET', url: `/api/v1/endpoints/${ep.endpoint.slug}/events` },
  { method: 'GET', url: `/api/v1/events/${eventId}` },
  { method: 'POST', url: `/api/v1/events/${eventId}/replay` },
  { method: 'POST', url: `/api/v1/endpoints/${ep.endpoint.slug}/doorbell-tests`, body: {} },
  { method: 'GET', url: `/api/v1/endpoints/${ep.endpoint.slug}/doorbell-tests/dt_01M8NK6R97BHCY3TA06992VD2A` },
  { method: 'GET', url: '/api/v1/admission' },
  { method: 'GET', url: `/api/v1/admission/endpoint:${ep.endpoint.slug}/inbox` },
  { method: 'PUT', url: `/api/v1/admission/endpoint:${ep.endpoint.slug}/inbox`, body: { max_in_flight: 1 } },
  { method: 'DELETE', url: `/api/v1/admission/endpoint:${ep.endpoint.slug}/inbox` },
  { method: 'GET', url: QUEUE },
  QUEUE_ADD,
  { method: 'DELETE', url: QUEUE },
  { method: 'POST', url: `${QUEUE}/reorder`, body: { entry_ids: [] } },
  { method: 'PATCH', url: ENTRY, body: { content: 'x' } },
  { method: 'DELETE', url: ENTRY },
  { method: 'GET', url: '/api/v1/settings/message-queue' },
  { method: 'PATCH', url: '/api/v1/settings/message-queue', body: { max_per_session: 10 } },
  { method: 'GET', url: `/api/v1/endpoints/${ep.endpoint.slug}/notify-hooks` },
  {
    method: 'POST',
    url: `/api/v1/endpoints/${ep.endpoint.slug}/notify-hooks`,
    body: { url: 'https://93.184.216.34/' },
  },
  { method: 'POST', url: `/api/v1/endpoints/${ep.endpoint.slug}/notify-hooks/:id/rotate` },
  { method: 'DELETE', url: `/api/v1/endpoints/${ep.endpoint.slug}/notify-hooks/:id` },
  { method: 'GET', url: `/api/v1/endpoints/${ep.endpoint.slug}/presence` },
  { method: 'PUT', url: `/api/v1/endpoints/${ep.endpoint.slug}/presence`, body: { presence: 'out' } },
  { method: 'DELETE', url: `/api/v1/endpoints/${ep.endpoint.slug}/presence` },
  { method: 'PUT', url: `/api/v1/endpoints/${ep.endpoint.slug}/shift`, body: { shift: null } },
  { method: 'GET', url: `/api/v1/endpoints/${ep.endpoint.slug}/schedules` },
  {
    method: 'POST',
    url: `/api/v1/endpoints/${ep.endpoint.slug}/schedules`,
    body: { queue: 'inbox', cron: '0 9 * * *', tz: 'UTC', title: 'x' },
  },
  { method: 'GET', url: `/api/v1/endpoints/${ep.endpoint.slug}/schedules/:id` },
  { method: 'PATCH', url: `/api/v1/endpoints/${ep.endpoint.slug}/schedules/:id`, body: { paused: true } },
  { method: 'DELETE', url: `/api/v1/endpoints/${ep.endpoint.slug}/schedules/:id` },
  { method: 'GET', url: `/api/v1/endpoints/${ep.endpoint.slug}/schedules/:id/audit` },
];

function call(route: Route, headers: Record<string, string>): Promise<Reply> {
  return h.request(route.method, route.url, { headers, ...(route.body !== undefined ? { body: route.body } : {}) });
}

/** Every route, with these headers, answers 401 with a Bearer challenge and changes nothing. */
async function allUnauthenticated(headers: Record<string, string>): Promise<void> {
  const before = await snapshot(h.pool);
  for (const route of ROUTES) {
    const label = `${route.method} ${route.url}`;
    const res = await call(route, headers);
    expectError(res, 401, 'unauthenticated', undefined, label);
    assert.equal(res.headers['www-authenticate'], 'Bearer realm="switchboard"', label);
  }
  assert.deepEqual(await snapshot(h.pool), before);
}

test('the route table covers every /api/v1 route the server registers', async () => {
  await h.app.ready();
  const tree = h.app.printRoutes({ commonPrefix: false });
  // Rebuild each full path from the printed tree; count methods, leaving out HEAD (Fastify adds it to GETs).
  const stack: string[] = [];
  const registered: string[] = [];
  for (const line of tree.split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+) \(([^)]+)\)/.exec(line);
    if (!match) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(match[2] ?? '');
    const path = stack.join('');
    for (const method of (match[3] ?? '').split(', ')) if (method !== 'HEAD') registered.push(`${method} ${path}`);
  }
  const apiRoutes = registered.filter((r) => r.split(' ')[1]?.startsWith('/api/v1/')).sort();
  const normalise = (url: string) =>
    url
      .replace(ep.endpoint.slug, ':ref')
      .replace(/\/(tokens|humans|todos|webhooks|events|sessions|quarantine|grants)\/[a-z]{2}_[0-9A-Z]{26}/, '/$1/:id')
      .replace(/(\/humans\/:id\/tokens\/)tk_[0-9A-Z]{26}/, '$1:tokenId')
      .replace(/\/queue\/[0-9a-f-]{36}$/, '/queue/:entry')
      .replace(/\/doorbell-tests\/dt_[0-9A-Z]{26}/, '/doorbell-tests/:test_id')
      .replace(/\/admission\/[^/]+\/[^/]+$/, '/admission/:scope/:queue');
  const table = [
    'POST /api/v1/setup',
    'POST /api/v1/auth/login',
    'POST /api/v1/auth/cli-token',
    'GET /api/v1/openapi.json',
    ...ROUTES.map((r) => `${r.method} ${normalise(r.url)}`),
  ].sort();
  assert.deepEqual(apiRoutes, table, tree);
});

test('every route answers 401 with a Bearer challenge when no credential is sent', async () => {
  await allUnauthenticated({});
});

test('every route answers 401 for a malformed Authorization header or an unknown token', async () => {
  await allUnauthenticated({ authorization: 'Basic YWRtaW46cGFzc3dvcmQ=' });
  await h.fresh();
  await allUnauthenticated({ authorization: 'Bearer' });
  await h.fresh();
  await allUnauthenticated({ authorization: `Bearer sbt_${'A'.repeat(43)}` });
  await h.fresh();
  await allUnauthenticated({ authorization: `Bearer ${member.token}x` });
});

test('an endpoint credential (sbk_) is for /mcp only and answers 401 on every route', async () => {
  await allUnauthenticated({ authorization: `Bearer ${ep.credential}` });
});

test('a token revoked with DELETE /api/v1/tokens/{id} answers 401 on every route at once', async () => {
  const doomed = await login(h, member.email);
  expectStatus(await h.get('/api/v1/whoami', { token: doomed.token }), 200);
  const res = await h.delete(`/api/v1/tokens/${doomed.tokenId}`, { token: member.token });
  expectStatus(res, 200);
  assert.ok(res.body.token.revoked_at);
  await allUnauthenticated({ authorization: `Bearer ${doomed.token}` });
});

test('a token revoked by logout answers 401 on every route at once', async () => {
  const doomed = await login(h, member.email);
  const res = await h.post('/api/v1/auth/logout', { token: doomed.token });
  expectStatus(res, 200);
  assert.deepEqual(res.body, { revoked: true });
  await allUnauthenticated({ authorization: `Bearer ${doomed.token}` });
});

test('a token past its expiry answers 401 on every route', async () => {
  const minted = await h.post('/api/v1/tokens', {
    token: member.token,
    body: { name: 'short-lived', expires_at: new Date(Date.now() + 3_600_000).toISOString() },
  });
  expectStatus(minted, 201);
  const doomed = await login(h, member.email);
  await h.pool.query(`UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = ANY($1)`, [
    [doomed.tokenId, minted.body.token.id],
  ]);
  await allUnauthenticated({ authorization: `Bearer ${doomed.token}` });
  await h.fresh();
  const workflow = await h.post(PUSH.url, { token: minted.body.secret, body: PUSH.body });
  expectError(workflow, 401, 'unauthenticated');
});

test('a member gets 403 on every /api/v1/humans route and an admin gets through', async () => {
  const before = await snapshot(h.pool);
  const humanRoutes = ROUTES.filter((r) => r.url.startsWith('/api/v1/humans'));
  assert.equal(humanRoutes.length, 10);
  for (const route of humanRoutes) {
    const res = await call(route, { authorization: `Bearer ${member.token}` });
    expectError(res, 403, 'forbidden', undefined, `${route.method} ${route.url}`);
  }
  assert.deepEqual(await snapshot(h.pool), before);

  expectStatus(await h.get('/api/v1/humans', { token: admin.token }), 200);
  expectStatus(await h.get(`/api/v1/humans/${member.human.id}`, { token: admin.token }), 200);
});

test('a workflow token pushes todos to its human’s endpoints, by slug and by id', async () => {
  const minted = await h.post('/api/v1/tokens', { token: member.token, body: { name: 'ci', kind: 'workflow' } });
  expectStatus(minted, 201);
  assert.equal(minted.body.token.kind, 'workflow');
  for (const ref of [ep.endpoint.slug, ep.endpoint.id]) {
    const res = await h.post(`/api/v1/endpoints/${ref}/todos`, {
      token: minted.body.secret,
      body: { queue: 'inbox', title: `from a workflow via ${ref}` },
    });
    expectStatus(res, 201, ref);
    assert.equal(res.body.todo.created_by_human_id, member.human.id);
  }
});

test('a workflow token gets 404 on another human’s endpoint, exactly like an unknown one', async () => {
  const minted = await h.post('/api/v1/tokens', { token: other.token, body: { name: 'ci' } });
  expectStatus(minted, 201);
  assert.equal(minted.body.token.kind, 'workflow', 'a minted token is a workflow token');
  const before = await snapshot(h.pool);
  const foreign = await h.post(PUSH.url, { token: minted.body.secret, body: PUSH.body });
  const unknownSlug = 'agent-zzzzzzzz';
  const unknown = await h.post(`/api/v1/endpoints/${unknownSlug}/todos`, {
    token: minted.body.secret,
    body: PUSH.body,
  });
  expectError(foreign, 404, 'not_found');
  assert.deepEqual(
    JSON.parse(foreign.text.split(ep.endpoint.slug).join('<ref>')),
    JSON.parse(unknown.text.split(unknownSlug).join('<ref>')),
  );
  assert.deepEqual(await snapshot(h.pool), before);
});

test('a workflow token gets 403 on every route but pushing todos and queueing messages, and changes nothing', async () => {
  const minted = await h.post('/api/v1/tokens', { token: member.token, body: { name: 'ci', kind: 'workflow' } });
  expectStatus(minted, 201);
  const before = await snapshot(h.pool);
  const refused: string[] = [];
  for (const [i, route] of ROUTES.filter((r) => r !== PUSH && r !== QUEUE_ADD).entries()) {
    // A fresh app now and then: one credential's burst is smaller than the route table.
    if (i > 0 && i % 20 === 0) await h.fresh();
    const res = await call(route, { authorization: `Bearer ${minted.body.secret}` });
    if (res.status !== 403 || res.body?.error?.code !== 'forbidden')
      refused.push(`${route.method} ${route.url} → ${res.status}`);
  }
  assert.deepEqual(refused, [], 'routes that did not answer 403 to a workflow token');
  assert.deepEqual(await snapshot(h.pool), before);
});

test('an admin’s workflow token is no admin: 403 on /api/v1/humans', async () => {
  const minted = await h.post('/api/v1/tokens', { token: admin.token, body: { name: 'ops', kind: 'workflow' } });
  expectStatus(minted, 201);
  expectError(await h.get('/api/v1/humans', { token: minted.body.secret }), 403, 'forbidden');
});

test('the 11th rapid sign-in from one address answers 429 with Retry-After (burst 10)', async (t) => {
  freezeClock(t);
  const answers: Reply[] = [];
  for (let i = 0; i < 11; i++) {
    answers.push(
      await h.post('/api/v1/auth/login', {
        body: { email: member.email, password: 'not the password' },
        remoteAddress: '198.51.100.7',
      }),
    );
  }
  for (const res of answers.slice(0, 10)) expectError(res, 401, 'unauthenticated');
  const last = answers[10] as Reply;
  expectError(last, 429, 'resource_exhausted');
  const retryAfter = Number(last.headers['retry-after']);
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1, `Retry-After: ${String(last.headers['retry-after'])}`);

  // Even the right password waits from that address; another address is not held back,
  // for another account or for the account guessed at (no one can lock an account out:
  // docs/design/limits.md, "Sign-in throttle").
  const right = await h.post('/api/v1/auth/login', {
    body: { email: member.email, password: PASSWORD },
    remoteAddress: '198.51.100.7',
  });
  expectError(right, 429, 'resource_exhausted');
  const elsewhere = await h.post('/api/v1/auth/login', {
    body: { email: other.email, password: PASSWORD },
    remoteAddress: '198.51.100.8',
  });
  expectStatus(elsewhere, 201);
  const sameAccount = await h.post('/api/v1/auth/login', {
    body: { email: member.email, password: PASSWORD },
    remoteAddress: '198.51.100.8',
  });
  expectStatus(sameAccount, 201);
});

test('the sign-in limit cannot be dodged by sending a different X-Forwarded-For each time', async (t) => {
  freezeClock(t);
  const statuses: number[] = [];
  for (let i = 0; i < 12; i++) {
    const res = await h.post('/api/v1/auth/login', {
      body: { email: member.email, password: 'not the password' },
      remoteAddress: '198.51.100.9',
      headers: { 'x-forwarded-for': `203.0.113.${i + 1}` },
    });
    statuses.push(res.status);
  }
  assert.ok(statuses.includes(429), `a guesser on one connection rotating X-Forwarded-For got ${statuses.join(', ')}`);
});

test('a flood from one address is cut off at the per-address burst before any credential check', async (t) => {
  freezeClock(t);
  const statuses: number[] = [];
  for (let i = 0; i < 200; i++)
    statuses.push((await h.get('/api/v1/whoami', { remoteAddress: '198.51.100.10' })).status);
  assert.ok(statuses.slice(0, 100).every((s) => s === 401));
  assert.ok(statuses.includes(429), statuses.join(','));
  const limited = await h.get('/api/v1/whoami', { remoteAddress: '198.51.100.10' });
  if (limited.status === 429) assert.ok(limited.headers['retry-after']);
});

test('one busy credential is cut off at its burst of 40 while another human is not', async (t) => {
  freezeClock(t);
  const statuses: number[] = [];
  for (let i = 0; i < 120; i++) {
    statuses.push((await h.get('/api/v1/tokens', { token: member.token, remoteAddress: `192.0.2.${i + 1}` })).status);
  }
  assert.ok(
    statuses.slice(0, 40).every((s) => s === 200),
    statuses.join(','),
  );
  assert.ok(statuses.includes(429), statuses.join(','));
  expectStatus(await h.get('/api/v1/tokens', { token: other.token }), 200);
});

test('an unknown id for a token answers 404 only once signed in', async () => {
  const id = newId('tk');
  expectError(await h.delete(`/api/v1/tokens/${id}`), 401, 'unauthenticated');
  expectError(await h.delete(`/api/v1/tokens/${id}`, { token: member.token }), 404, 'not_found');
});
