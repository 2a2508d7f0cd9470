// Pins sign-in and people through /api/v1: setup, login, logout, whoami, API tokens and the admin's humans routes.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { newId } from '../../src/domain/ids.js';
import {
  apiHarness,
  expectError,
  expectStatus,
  login,
  makePeople,
  snapshot,
  tableCounts,
  withoutId,
  PASSWORD,
  PUBLIC_URL,
  idsOf,
} from './app.js';

const h = await apiHarness('api_identity');
const { admin, member, other } = await makePeople(h);
beforeEach(() => h.fresh());

const HUMAN_KEYS = ['created_at', 'display_name', 'email', 'id', 'role', 'state'];
const TOKEN_KEYS = ['created_at', 'expires_at', 'id', 'kind', 'last_used_at', 'name', 'revoked_at'];

test('the humans made through setup and the admin’s routes have the roles they were given', () => {
  assert.equal(admin.human.role, 'admin');
  assert.equal(admin.human.display_name, 'Ada Admin');
  assert.equal(member.human.role, 'member');
  assert.equal(other.human.role, 'member');
  assert.deepEqual(Object.keys(admin.human).sort(), HUMAN_KEYS);
});

test('an unknown setup link answers 401 naming token and adds no human', async () => {
  const before = await tableCounts(h.pool);
  const res = await h.post('/api/v1/setup', {
    body: { token: 'sbs_not-a-live-link', email: 'second@example.test', password: PASSWORD },
  });
  expectError(res, 401, 'unauthenticated', 'token');
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('login answers 201 with a human token, and the same 401 for a wrong password and an unknown email', async () => {
  const ok = await h.post('/api/v1/auth/login', {
    body: { email: 'MEMBER@example.test', password: PASSWORD, token_name: 'laptop' },
  });
  expectStatus(ok, 201);
  assert.match(ok.body.token, /^sbt_/);
  assert.match(ok.body.token_id, /^tk_/);
  assert.deepEqual(ok.body.human, member.human);

  const wrongPassword = await h.post('/api/v1/auth/login', {
    body: { email: member.email, password: 'wrong-password' },
  });
  const unknownEmail = await h.post('/api/v1/auth/login', {
    body: { email: 'nobody@example.test', password: PASSWORD },
  });
  expectError(wrongPassword, 401, 'unauthenticated');
  assert.deepEqual(unknownEmail.body, wrongPassword.body);
  assert.equal(unknownEmail.status, wrongPassword.status);
});

test('whoami answers the human and the token it was called with', async () => {
  const res = await h.get('/api/v1/whoami', { token: member.token });
  expectStatus(res, 200);
  const expiresAt = res.body.token?.expires_at;
  assert.deepEqual(res.body, {
    human: member.human,
    token: { id: member.tokenId, kind: 'human', name: 'cli', expires_at: expiresAt },
  });
  assert.ok(Date.parse(expiresAt) > Date.now(), 'a login token carries its (sliding) expiry');
});

test('logout revokes the presented token only', async () => {
  const first = await login(h, member.email);
  const second = await login(h, member.email);
  const res = await h.post('/api/v1/auth/logout', { token: first.token });
  expectStatus(res, 200);
  assert.deepEqual(res.body, { revoked: true });
  expectError(await h.get('/api/v1/whoami', { token: first.token }), 401, 'unauthenticated');
  expectStatus(await h.get('/api/v1/whoami', { token: second.token }), 200);
});

test('tokens lists only the caller’s own tokens, without any secret or hash', async () => {
  const res = await h.get('/api/v1/tokens', { token: other.token });
  expectStatus(res, 200);
  assert.ok(res.body.tokens.length >= 1);
  for (const token of res.body.tokens) assert.deepEqual(Object.keys(token).sort(), TOKEN_KEYS);
  const ids = new Set(idsOf(res.body.tokens));
  assert.ok(ids.has(other.tokenId));
  assert.ok(!ids.has(member.tokenId));
  assert.ok(!ids.has(admin.tokenId));
});

test('POST /api/v1/tokens mints a workflow token shown once, with an optional expiry', async () => {
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  const res = await h.post('/api/v1/tokens', {
    token: member.token,
    body: { name: 'nightly', kind: 'workflow', expires_at: expiresAt },
  });
  expectStatus(res, 201);
  assert.match(res.body.secret, /^sbt_/);
  assert.deepEqual(Object.keys(res.body.token).sort(), TOKEN_KEYS);
  assert.equal(res.body.token.kind, 'workflow');
  assert.equal(res.body.token.name, 'nightly');
  assert.equal(new Date(res.body.token.expires_at).toISOString(), expiresAt);
  const listed = await h.get('/api/v1/tokens', { token: member.token });
  assert.ok(!listed.text.includes(res.body.secret), 'the secret is never listed');
  const who = await h.get('/api/v1/whoami', { token: member.token });
  assert.equal(who.body.token.kind, 'human');
});

test('POST /api/v1/tokens refuses an expiry in the past, a kind other than workflow and an empty name', async () => {
  const before = await tableCounts(h.pool);
  const past = await h.post('/api/v1/tokens', {
    token: member.token,
    body: { name: 'late', expires_at: new Date(Date.now() - 1000).toISOString() },
  });
  expectError(past, 400, 'invalid_argument', 'expires_at');
  const human = await h.post('/api/v1/tokens', { token: member.token, body: { name: 'x', kind: 'human' } });
  expectError(human, 400, 'invalid_argument', 'kind');
  const empty = await h.post('/api/v1/tokens', { token: member.token, body: { name: '  ' } });
  expectError(empty, 400, 'invalid_argument', 'name');
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('DELETE /api/v1/tokens/{id} revokes the caller’s own token and is idempotent', async () => {
  const spare = await login(h, member.email);
  const first = await h.delete(`/api/v1/tokens/${spare.tokenId}`, { token: member.token });
  expectStatus(first, 200);
  assert.equal(first.body.token.id, spare.tokenId);
  assert.ok(first.body.token.revoked_at);
  const again = await h.delete(`/api/v1/tokens/${spare.tokenId}`, { token: member.token });
  expectStatus(again, 200);
  assert.equal(again.body.token.revoked_at, first.body.token.revoked_at);
});

test('DELETE on another human’s token answers 404 exactly like an unknown id and revokes nothing', async () => {
  const before = await snapshot(h.pool);
  const foreign = await h.delete(`/api/v1/tokens/${member.tokenId}`, { token: other.token });
  const unknownId = newId('tk');
  const unknown = await h.delete(`/api/v1/tokens/${unknownId}`, { token: other.token });
  expectError(foreign, 404, 'not_found');
  assert.deepEqual(withoutId(foreign, member.tokenId), withoutId(unknown, unknownId));
  assert.deepEqual(await snapshot(h.pool), before);
  expectStatus(await h.get('/api/v1/whoami', { token: member.token }), 200);
});

test('an admin lists humans and shows one, never with a password hash', async () => {
  const list = await h.get('/api/v1/humans', { token: admin.token });
  expectStatus(list, 200);
  const emails = (list.body.humans as { email: string }[]).map((x) => x.email);
  assert.deepEqual(emails, ['admin@example.test', 'member@example.test', 'other@example.test']);
  for (const human of list.body.humans) assert.deepEqual(Object.keys(human).sort(), HUMAN_KEYS);
  const one = await h.get(`/api/v1/humans/${other.human.id}`, { token: admin.token });
  expectStatus(one, 200);
  assert.deepEqual(one.body, { human: other.human });
  const unknownId = newId('hu');
  expectError(await h.get(`/api/v1/humans/${unknownId}`, { token: admin.token }), 404, 'not_found');
  assert.ok(!list.text.includes('scrypt') && !list.text.includes('password'));
});

test('a human created without a password gets an invite link that sets it once', async () => {
  const created = await h.post('/api/v1/humans', {
    token: admin.token,
    body: { email: 'Invitee@Example.test', display_name: 'Ivy', role: 'admin' },
  });
  expectStatus(created, 201);
  assert.equal(created.body.human.email, 'invitee@example.test');
  assert.equal(created.body.human.role, 'admin');
  const inviteUrl = String(created.body.invite_url);
  assert.ok(inviteUrl.startsWith(`${PUBLIC_URL}/setup/sbs_`), inviteUrl);
  const token = inviteUrl.slice(inviteUrl.lastIndexOf('/') + 1);

  const before = await h.post('/api/v1/auth/login', { body: { email: 'invitee@example.test', password: PASSWORD } });
  expectError(before, 401, 'unauthenticated');

  const set = await h.post('/api/v1/setup', { body: { token, password: 'a new password' } });
  expectStatus(set, 201);
  assert.equal(set.body.human.id, created.body.human.id);
  const signedIn = await login(h, 'invitee@example.test', 'a new password');
  assert.equal(signedIn.human.role, 'admin');

  const again = await h.post('/api/v1/setup', { body: { token, password: 'another password' } });
  expectError(again, 401, 'unauthenticated', 'token');
  await login(h, 'invitee@example.test', 'a new password');
});

test('a human created with a password signs in at once and gets no invite link', async () => {
  const created = await h.post('/api/v1/humans', {
    token: admin.token,
    body: { email: 'direct@example.test', password: PASSWORD },
  });
  expectStatus(created, 201);
  assert.equal(created.body.invite_url, undefined);
  assert.equal(created.body.human.role, 'member');
  await login(h, 'direct@example.test');
});

test('creating a human whose email exists (in any case) answers 409 naming email', async () => {
  const before = await tableCounts(h.pool);
  const res = await h.post('/api/v1/humans', { token: admin.token, body: { email: 'Other@Example.TEST' } });
  expectError(res, 409, 'conflict', 'email');
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('creating a human refuses a bad email, a short password and an unknown role, naming the field', async () => {
  const before = await tableCounts(h.pool);
  const cases: [Record<string, unknown>, string][] = [
    [{ email: 'not-an-email' }, 'email'],
    [{ email: 'short@example.test', password: 'short' }, 'password'],
    [{ email: 'role@example.test', role: 'owner' }, 'role'],
    [{}, 'email'],
  ];
  for (const [body, field] of cases) {
    expectError(await h.post('/api/v1/humans', { token: admin.token, body }), 400, 'invalid_argument', field);
  }
  assert.deepEqual(await tableCounts(h.pool), before);
});

test('login refuses a missing password with 400 naming password, before any credential check', async () => {
  expectError(
    await h.post('/api/v1/auth/login', { body: { email: member.email } }),
    400,
    'invalid_argument',
    'password',
  );
});
