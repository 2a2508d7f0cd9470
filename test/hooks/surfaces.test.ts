// Pins the notify hook and presence surfaces: the hooks family is never granted by
// default, its MCP verbs and API twins manage hooks (secret shown once, no secrets in
// lists, foreign ids not found), and the owner steers presence and shift through the API.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { apiHarness, expectError, expectStatus, makePeople, vend } from '../api/app.js';
import { connect, fails, ok, startApp, vend as vendDirect } from '../mcp/harness.js';

const h = await apiHarness('hooks_surfaces');
const { member, other } = await makePeople(h);
const { url: mcpUrl } = await startApp(h.pool, 'hooks-surfaces');
const TARGET = 'https://93.184.216.34/hook?token=abc';

test('the hooks family is never granted by default and its verbs are forbidden without it', async () => {
  const basic = await vendDirect(h.pool);
  assert.ok(!basic.endpoint.verbs.includes('create_notify_hook'));
  const c = await connect(mcpUrl, basic.credential);
  const tools = (await c.client.listTools()).tools.map((t) => t.name);
  assert.ok(!tools.includes('create_notify_hook'));
  for (const self of ['clock_in', 'clock_out', 'presence']) assert.ok(tools.includes(self), self);
  await fails(c, 'create_notify_hook', { url: TARGET }, 'forbidden');
});

test('an endpoint granted hooks creates, lists, rotates and deletes its own hooks over MCP', async () => {
  const granted = await vendDirect(h.pool, { verbs: ['drain', 'hooks'] });
  const c = await connect(mcpUrl, granted.credential);
  const created = await ok(c, 'create_notify_hook', { url: TARGET, queues: ['inbox'] });
  assert.match(created.signing_secret, /^whsec_/);
  assert.equal(created.enabled, true);
  const listed = await ok(c, 'list_notify_hooks');
  assert.equal(listed.used, 1);
  assert.equal(listed.max, 5);
  assert.ok(!JSON.stringify(listed).includes(created.signing_secret), 'no secret in a list');
  assert.equal(listed.hooks[0].health.consecutive_failures, 0);
  const rotated = await ok(c, 'rotate_notify_hook', { hook_id: created.hook_id });
  assert.notEqual(rotated.signing_secret, created.signing_secret);
  const immediate = await ok(c, 'rotate_notify_hook', { hook_id: created.hook_id, immediate: true });
  assert.notEqual(immediate.signing_secret, rotated.signing_secret);
  const kept = await h.pool.query('SELECT prev_secret FROM notify_hooks WHERE id = $1', [created.hook_id]);
  assert.deepEqual(kept.rows, [{ prev_secret: null }], 'immediate over MCP keeps no old secret');
  await fails(c, 'create_notify_hook', { url: 'https://127.0.0.1/hook' }, 'invalid_argument');
  await fails(c, 'create_notify_hook', { url: 'http://93.184.216.34/hook' }, 'invalid_argument');
  await fails(c, 'create_notify_hook', { url: TARGET, queues: ['elsewhere'] }, 'invalid_argument');

  const stranger = await vendDirect(h.pool, { verbs: ['hooks'] });
  const s = await connect(mcpUrl, stranger.credential);
  await fails(s, 'delete_notify_hook', { hook_id: created.hook_id }, 'not_found');
  await ok(c, 'delete_notify_hook', { hook_id: created.hook_id });
  assert.equal((await ok(c, 'list_notify_hooks')).used, 0);
});

test('the owner manages hooks through the API; another human gets 404', async () => {
  const { endpoint } = await vend(h, member);
  const base = `/api/v1/endpoints/${endpoint.slug}/notify-hooks`;
  const created = await h.post(base, { token: member.token, body: { url: TARGET, ignore_presence: true } });
  expectStatus(created, 201);
  assert.match(created.body.signing_secret, /^whsec_/);
  assert.equal(created.body.ignore_presence, true);
  expectError(
    await h.post(base, { token: member.token, body: { url: 'https://10.1.2.3/' } }),
    400,
    'invalid_argument',
    'url',
  );
  expectError(
    await h.post(base, { token: member.token, body: { url: TARGET, extra: 1 } }),
    400,
    'invalid_argument',
    'extra',
  );
  const listed = await h.get(base, { token: member.token });
  expectStatus(listed, 200);
  assert.equal(listed.body.hooks.length, 1);
  assert.equal(listed.body.hooks[0].signing_secret, undefined);
  expectStatus(await h.get(base, { token: other.token }), 404);
  const id = created.body.hook_id as string;
  expectStatus(await h.post(`${base}/${id}/rotate`, { token: other.token }), 404);
  expectStatus(await h.post(`${base}/${id}/rotate`, { token: member.token }), 200);
  const graced = await h.pool.query('SELECT prev_secret IS NOT NULL AS kept FROM notify_hooks WHERE id = $1', [id]);
  assert.deepEqual(graced.rows, [{ kept: true }], 'a plain rotation keeps the old secret for its grace');
  const immediate = await h.post(`${base}/${id}/rotate`, { token: member.token, body: { immediate: true } });
  expectStatus(immediate, 200);
  assert.match(immediate.body.signing_secret, /^whsec_/);
  const dropped = await h.pool.query('SELECT prev_secret IS NOT NULL AS kept FROM notify_hooks WHERE id = $1', [id]);
  assert.deepEqual(dropped.rows, [{ kept: false }], '{immediate: true} keeps no old secret');
  expectError(
    await h.post(`${base}/${id}/rotate`, { token: member.token, body: { immediate: 'yes' } }),
    400,
    'invalid_argument',
    'immediate',
  );
  expectError(
    await h.post(`${base}/${id}/rotate`, { token: member.token, body: [true] }),
    400,
    'invalid_argument',
    'body',
  );
  expectStatus(await h.delete(`${base}/${id}`, { token: member.token }), 200);
  expectError(await h.delete(`${base}/${id}`, { token: member.token }), 404, 'not_found');
});

test('the owner sets presence and shift through the API and the agent sees it', async () => {
  const { endpoint, credential } = await vend(h, member);
  const base = `/api/v1/endpoints/${endpoint.slug}`;
  const until = new Date(Date.now() + 24 * 3600_000).toISOString();
  const out = await h.request('PUT', `${base}/presence`, { token: member.token, body: { presence: 'out', until } });
  expectStatus(out, 200);
  assert.equal(out.body.presence, 'out');
  assert.equal(out.body.source, 'operator');
  assert.equal(out.body.until, until);
  const c = await connect(mcpUrl, credential);
  assert.equal((await ok(c, 'presence')).presence, 'out');
  expectStatus(await h.request('PUT', `${base}/presence`, { token: other.token, body: { presence: 'in' } }), 404);
  expectError(
    await h.request('PUT', `${base}/presence`, { token: member.token, body: { presence: 'away' } }),
    400,
    'invalid_argument',
    'presence',
  );
  expectStatus(await h.delete(`${base}/presence`, { token: member.token }), 200);
  expectError(
    await h.request('PUT', `${base}/shift`, { token: member.token, body: { shift: 'Mon-Fri 9-5' } }),
    400,
    'invalid_argument',
    'shift',
  );
  const shifted = await h.request('PUT', `${base}/shift`, {
    token: member.token,
    body: { shift: 'TZ=Pacific/Kiritimati; Mon-Sun 00:00-24:00' },
  });
  expectStatus(shifted, 200);
  assert.equal(shifted.body.source, 'shift');
  assert.equal(shifted.body.presence, 'in');
  const read = await h.get(`${base}/presence`, { token: member.token });
  assert.equal(read.body.shift, 'TZ=Pacific/Kiritimati; Mon-Sun 00:00-24:00');
  expectStatus(await h.request('PUT', `${base}/shift`, { token: member.token, body: { shift: null } }), 200);
});
