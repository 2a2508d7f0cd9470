// Pins SWITCHBOARD_AUTH=off: refused off loopback by the config, and on loopback every
// /api/v1 request is the synthetic admin, except a cross-site one that changes something.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { parseConfig } from '../../src/config/schema.js';
import { localAdmin } from '../../src/identity/setup.js';
import { apiHarness, expectError, expectStatus, idsOf, tableCounts, PUBLIC_URL } from './app.js';

const h = await apiHarness('api_auth_off', (pool) => localAdmin({ db: pool, publicUrl: PUBLIC_URL }));
beforeEach(() => h.fresh());

const LOCAL_ADMIN_ID = 'hu_00000000000000000000000000';

test('the config refuses SWITCHBOARD_AUTH=off on a non-loopback address, naming SWITCHBOARD_AUTH', () => {
  for (const listen of ['0.0.0.0:8080', '[::]:8080', '192.168.1.10:8080', 'switchboard.example.com:8080']) {
    const result = parseConfig({ SWITCHBOARD_AUTH: 'off', SWITCHBOARD_LISTEN: listen });
    assert.equal(result.ok, false, listen);
    if (result.ok) continue;
    assert.ok(
      result.problems.some((p) => p.startsWith('SWITCHBOARD_AUTH')),
      `${listen}: ${result.problems.join('; ')}`,
    );
  }
});

test('the config accepts SWITCHBOARD_AUTH=off on loopback and leaves auth on by default', () => {
  for (const listen of ['127.0.0.1:8080', '[::1]:8080', 'localhost:8080']) {
    const result = parseConfig({ SWITCHBOARD_AUTH: 'off', SWITCHBOARD_LISTEN: listen });
    assert.ok(result.ok, `${listen}: ${result.ok ? '' : result.problems.join('; ')}`);
    assert.equal(result.config.auth, false);
  }
  const byDefault = parseConfig({ SWITCHBOARD_AUTH: 'off' });
  assert.ok(byDefault.ok && byDefault.config.auth === false);
  const on = parseConfig({ SWITCHBOARD_LISTEN: '0.0.0.0:8080', SWITCHBOARD_METRICS_TOKEN: 'm'.repeat(32) });
  assert.ok(on.ok && on.config.auth === true);
});

test('with auth off, whoami answers the synthetic admin without any credential', async () => {
  const res = await h.get('/api/v1/whoami');
  expectStatus(res, 200);
  assert.equal(res.body.human.id, LOCAL_ADMIN_ID);
  assert.equal(res.body.human.role, 'admin');
  assert.equal(res.body.human.email, 'admin@localhost');
  assert.equal(res.body.token, null);
  assert.equal(res.headers['www-authenticate'], undefined);
});

test('with auth off, vend, show, push and list work without any credential, owned by the synthetic admin', async () => {
  const vended = await h.post('/api/v1/endpoints', { body: { name: 'local agent' } });
  expectStatus(vended, 201);
  assert.match(vended.body.credential, /^sbk_/);
  const slug: string = vended.body.endpoint.slug;
  const owner = await h.pool.query('SELECT human_id FROM endpoints WHERE id = $1', [vended.body.endpoint.id]);
  assert.equal(owner.rows[0].human_id, LOCAL_ADMIN_ID);

  expectStatus(await h.get(`/api/v1/endpoints/${slug}`), 200);
  const pushed = await h.post(`/api/v1/endpoints/${slug}/todos`, { body: { queue: 'inbox', title: 'local' } });
  expectStatus(pushed, 201);
  const list = await h.get(`/api/v1/endpoints/${slug}/todos`);
  expectStatus(list, 200);
  assert.deepEqual(idsOf(list.body.todos), [pushed.body.todo.id]);
  expectStatus(await h.get('/api/v1/humans'), 200);
});

test('with auth off, a credential sent anyway is ignored: even a garbage token is the synthetic admin', async () => {
  const res = await h.get('/api/v1/whoami', { token: 'sbt_garbage' });
  expectStatus(res, 200);
  assert.equal(res.body.human.id, LOCAL_ADMIN_ID);
});

test('with auth off, a cross-site HTML form cannot create an admin with a known password', async () => {
  // A page on any site can auto-submit a form to http://127.0.0.1:8080 (no preflight for
  // form-encoded bodies). With auth off every request is the admin, so the form must be refused.
  const before = await tableCounts(h.pool);
  const res = await h.post('/api/v1/humans', {
    payload: new URLSearchParams({
      email: 'mallory@example.test',
      role: 'admin',
      password: 'mallory-knows-this',
    }).toString(),
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      origin: 'https://evil.example',
    },
  });
  assert.notEqual(res.status, 201, `a form post created a human: ${res.text}`);
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('with auth off, a body-less cross-site POST is refused by its Origin or Sec-Fetch-Site, and changes nothing', async () => {
  const vended = await h.post('/api/v1/endpoints', { body: { name: 'cross-site target' } });
  expectStatus(vended, 201);
  const slug: string = vended.body.endpoint.slug;
  const revoked = async (): Promise<Date | null> => {
    const res = await h.pool.query<{ revoked_at: Date | null }>('SELECT revoked_at FROM endpoints WHERE id = $1', [
      vended.body.endpoint.id,
    ]);
    return res.rows[0]?.revoked_at ?? null;
  };
  const crossSite: Array<Record<string, string>> = [
    { origin: 'https://evil.example' },
    { origin: 'http://127.0.0.1:3000' },
    { origin: 'null' },
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site' },
  ];
  for (const headers of crossSite) {
    const res = await h.post(`/api/v1/endpoints/${slug}/revoke`, { headers });
    expectError(res, 403, 'forbidden', undefined, JSON.stringify(headers));
    assert.match(res.body.error.message, /Origin|Sec-Fetch-Site/);
    assert.equal(await revoked(), null, JSON.stringify(headers));
  }
  // A GET from anywhere still reads (a browser cannot read a cross-site answer anyway).
  expectStatus(await h.get('/api/v1/whoami', { headers: { 'sec-fetch-site': 'cross-site' } }), 200);
  // This server's own pages, and clients that send neither header (the CLI, curl), go through.
  expectStatus(
    await h.post(`/api/v1/endpoints/${slug}/revoke`, {
      headers: { origin: 'http://127.0.0.1:8080', 'sec-fetch-site': 'same-origin' },
    }),
    200,
  );
  assert.notEqual(await revoked(), null);
  const other = await h.post('/api/v1/endpoints', { body: { name: 'cli target' } });
  expectStatus(await h.post(`/api/v1/endpoints/${other.body.endpoint.slug}/revoke`), 200);
});

test('with auth off, bad input is still refused like with auth on', async () => {
  expectError(
    await h.post('/api/v1/endpoints', { body: { name: 'x', colour: 'blue' } }),
    400,
    'invalid_argument',
    'colour',
  );
});
