// Pins bad bodies on every route that takes one: malformed JSON, unknown fields and over the body limit (1 MiB; 8 MiB on
// the todos route, which takes bulk creates) are refused and write nothing.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { BODY_LIMIT, BULK_BODY_LIMIT } from '../../src/http/app.js';
import { apiHarness, expectError, makePeople, tableCounts, vend, PASSWORD, PUBLIC_URL } from './app.js';

const h = await apiHarness('api_bad_input');
const { admin, member } = await makePeople(h);
const { endpoint } = await vend(h, member, { name: 'target' });
const hook = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
  token: member.token,
  body: { queue: 'inbox' },
});
const ingestPath: string = String(hook.body.url).slice(PUBLIC_URL.length);
beforeEach(() => h.fresh());

interface BodyRoute {
  url: string;
  token?: string;
  /** A body the route accepts. */
  valid: Record<string, unknown>;
  /** The route's own body limit, when it is not BODY_LIMIT. */
  limit?: number;
}

/** Every /api/v1 route that reads a JSON body. */
const ROUTES: BodyRoute[] = [
  { url: '/api/v1/setup', valid: { token: 'sbs_whatever', email: 'x@example.test', password: PASSWORD } },
  { url: '/api/v1/auth/login', valid: { email: member.email, password: PASSWORD } },
  { url: '/api/v1/tokens', token: member.token, valid: { name: 'ci', kind: 'workflow' } },
  { url: '/api/v1/humans', token: admin.token, valid: { email: 'new@example.test' } },
  { url: '/api/v1/endpoints', token: member.token, valid: { name: 'new' } },
  {
    url: `/api/v1/endpoints/${endpoint.slug}/todos`,
    token: member.token,
    valid: { queue: 'inbox', title: 't' },
    limit: BULK_BODY_LIMIT,
  },
  { url: `/api/v1/endpoints/${endpoint.slug}/webhooks`, token: member.token, valid: { queue: 'inbox' } },
];

/** Runs `send` on each route and asserts nothing was written anywhere. */
async function nothingWritten(send: () => Promise<void>): Promise<void> {
  const before = await tableCounts(h.pool);
  await send();
  assert.deepEqual(await tableCounts(h.pool), before);
}

const JSON_TYPE = { 'content-type': 'application/json' };

test('malformed JSON answers 400 invalid_argument on every route with a body, the ingest route too', async () => {
  await nothingWritten(async () => {
    for (const route of [...ROUTES, { url: ingestPath, valid: {} }]) {
      for (const payload of ['{"name": ', '{name: "x"}', "{'a': 1}", '{"a":1}}']) {
        const res = await h.post(route.url, {
          payload,
          headers: JSON_TYPE,
          ...(route.token ? { token: route.token } : {}),
        });
        expectError(res, 400, 'invalid_argument', 'body', `${route.url} ${payload}`);
      }
    }
  });
});

test('an empty JSON body, a missing body and JSON that is not an object answer 400 on every route', async () => {
  await nothingWritten(async () => {
    for (const route of ROUTES) {
      const auth = route.token ? { token: route.token } : {};
      expectError(await h.post(route.url, { payload: '', headers: JSON_TYPE, ...auth }), 400, 'invalid_argument');
      expectError(await h.post(route.url, auth), 400, 'invalid_argument', undefined, `${route.url} no body`);
      for (const payload of ['null', '[]', '"name"', '42']) {
        const res = await h.post(route.url, { payload, headers: JSON_TYPE, ...auth });
        expectError(res, 400, 'invalid_argument', undefined, `${route.url} ${payload}`);
      }
      await h.fresh();
    }
  });
});

test('an unknown field answers 400 naming it on every route with a body', async () => {
  await nothingWritten(async () => {
    for (const route of ROUTES) {
      const res = await h.post(route.url, {
        body: { ...route.valid, colour: 'blue' },
        ...(route.token ? { token: route.token } : {}),
      });
      expectError(res, 400, 'invalid_argument', 'colour', route.url);
      assert.match(res.body.error.message, /colour/);
    }
  });
});

test('a body over its route’s limit answers 413 invalid_argument on every route with a body, the ingest route too', async () => {
  await nothingWritten(async () => {
    for (const route of [...ROUTES, { url: ingestPath, valid: {} as Record<string, unknown> }]) {
      const limit = 'limit' in route && route.limit ? route.limit : BODY_LIMIT;
      const payload = JSON.stringify({ ...route.valid, title: 'x'.repeat(limit) });
      assert.ok(Buffer.byteLength(payload) > limit);
      const res = await h.post(route.url, {
        payload,
        headers: JSON_TYPE,
        ...('token' in route && route.token ? { token: route.token } : {}),
      });
      expectError(res, 413, 'invalid_argument', undefined, route.url);
    }
  });
});

test('a body just under 1 MiB is read (and then judged by its fields)', async () => {
  await nothingWritten(async () => {
    const payload = JSON.stringify({ queue: 'inbox', title: 't', body: 'x'.repeat(BODY_LIMIT - 100) });
    assert.ok(Buffer.byteLength(payload) <= BODY_LIMIT);
    const res = await h.post(`/api/v1/endpoints/${endpoint.slug}/todos`, {
      payload,
      headers: JSON_TYPE,
      token: member.token,
    });
    expectError(res, 400, 'invalid_argument', 'body');
  });
});

test('/api/v1 takes JSON only: a form-encoded body is refused and writes nothing', async () => {
  await nothingWritten(async () => {
    const res = await h.post('/api/v1/endpoints', {
      token: member.token,
      payload: 'name=from-a-form',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    assert.ok(res.status === 400 || res.status === 415, `${res.status} ${res.text}`);
  });
});

// Found by the fuzzer (test/fuzz/api.test.ts): PostgreSQL text cannot hold U+0000, so a
// NUL in a path parameter reached a query and answered 500; the router's own refusals
// (a malformed percent-encoding, a parameter over 100 characters) answered in Fastify's
// shape, the latter as 414.
test('a NUL or an unpaired surrogate in a path parameter, a query string or a body answers 400 naming it, never 500', async () => {
  const cases: [string, string, Record<string, unknown> | undefined, string][] = [
    ['PUT', '/api/v1/endpoints/%00/presence', { presence: 'in' }, 'ref'],
    ['GET', '/api/v1/todos/td_%00', undefined, 'id'],
    ['DELETE', '/api/v1/sessions/a%00b/queue', undefined, 'id'],
    ['GET', `/api/v1/endpoints/${endpoint.slug}/todos?cursor=%00`, undefined, 'cursor'],
    ['POST', '/api/v1/tokens', { name: 'a\u0000b' }, 'name'],
    [
      'POST',
      `/api/v1/endpoints/${endpoint.slug}/todos`,
      { queue: 'inbox', title: 't', payload: { a: ['\u0000'] } },
      'payload',
    ],
    // jsonb refuses an unpaired surrogate (its \ud800 escape) as it refuses NUL.
    [
      'POST',
      `/api/v1/endpoints/${endpoint.slug}/todos`,
      { queue: 'inbox', title: 't', payload: { a: 'x\ud800' } },
      'payload',
    ],
  ];
  await nothingWritten(async () => {
    for (const [method, url, body, field] of cases) {
      const res = await h.request(method, url, { token: member.token, ...(body ? { body } : {}) });
      expectError(res, 400, 'invalid_argument', field, `${method} ${url}`);
    }
  });
});

test("the router's refusals of a URL answer 400 invalid_argument naming the path", async () => {
  for (const url of ['/api/v1/todos/%zz', '/api/v1/todos/%E0%A4%A', `/api/v1/todos/${'a'.repeat(101)}`]) {
    expectError(await h.get(url, { token: member.token }), 400, 'invalid_argument', 'path', url);
  }
});

// Found by the fuzzer (test/fuzz/mcp.test.ts, create_todo): validating a payload a few
// thousand levels deep overflowed the stack (a recursive NUL check, JSON.stringify), an
// internal error on the MCP verb and a 500 here.
test('a payload nested deeper than 100 levels answers 400 naming it; 100 levels are accepted', async () => {
  const nested = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
  const url = `/api/v1/endpoints/${endpoint.slug}/todos`;
  await nothingWritten(async () => {
    for (const depth of [101, 5_000, 100_000]) {
      const payload = `{"queue":"inbox","title":"deep","payload":${nested(depth)}}`;
      const res = await h.post(url, { token: member.token, payload, headers: JSON_TYPE });
      expectError(res, 400, 'invalid_argument', 'payload', `depth ${depth}`);
    }
  });
  const ok = await h.post(url, {
    token: member.token,
    payload: `{"queue":"inbox","title":"deep","payload":${nested(100)}}`,
    headers: JSON_TYPE,
  });
  assert.equal(ok.status, 201, ok.text);
});
