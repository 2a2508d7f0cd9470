// Pins the sign-in throttle and the shared credential budget: failures counted per
// (account, address) and per address with IPv6 grouped by /64, never an account locked
// out (a right password from a fresh address signs in; past the account's failure budget
// wrong ones are answered slowly), least-recently-used eviction that keeps the others'
// state, one generic answer whether the account exists or not, and workflow tokens
// spending their human's per-credential bucket.

import assert from 'node:assert/strict';
import { beforeEach, test, type TestContext } from 'node:test';
import { addressKey, RateLimiter } from '../../src/http/rate-limit.js';
import { apiHarness, expectError, expectStatus, makePeople } from './app.js';

const h = await apiHarness('api_signin_throttle', undefined, {
  SWITCHBOARD_API_RATE: '20',
  SWITCHBOARD_API_BURST: '40',
});
const { member } = await makePeople(h);
beforeEach(() => h.fresh());

function freezeClock(t: TestContext): void {
  h.frozenAt = new Date();
  t.after(() => {
    h.frozenAt = null;
  });
}

const attempt = (email: string, remoteAddress: string, password = 'not the password') =>
  h.post('/api/v1/auth/login', { body: { email, password }, remoteAddress });

test('wrong passwords from many addresses cannot lock an account out: its password from a fresh address signs in', async (t) => {
  freezeClock(t);
  for (let i = 0; i < 12; i++) {
    expectError(await attempt(member.email.toUpperCase(), `192.0.2.${i + 1}`), 401, 'unauthenticated');
  }
  expectStatus(await attempt(member.email, '192.0.2.200', member.password), 201);
});

test('failures count per account and address: that address is refused for the account, another is not', async (t) => {
  freezeClock(t);
  for (let i = 0; i < 10; i++) expectError(await attempt(member.email, '192.0.2.77'), 401, 'unauthenticated');
  const limited = await attempt(member.email, '192.0.2.77', member.password);
  expectError(limited, 429, 'resource_exhausted');
  assert.ok(Number(limited.headers['retry-after']) >= 1);
  expectStatus(await attempt(member.email, '192.0.2.78', member.password), 201);
});

test('a correct password costs no failure: an address that signs in often is never refused for it', async (t) => {
  freezeClock(t);
  for (let i = 0; i < 15; i++)
    expectStatus(await attempt(member.email, '192.0.2.90', member.password), 201, `try ${i}`);
});

test('past the account’s failure budget a wrong password is answered slowly, a right one at once', async (t) => {
  freezeClock(t);
  for (let i = 0; i < 10; i++) expectError(await attempt(member.email, `192.0.2.${120 + i}`), 401, 'unauthenticated');
  const started = Date.now();
  expectError(await attempt(member.email, '192.0.2.140'), 401, 'unauthenticated');
  assert.ok(Date.now() - started >= 1_900, `the failure answered after ${Date.now() - started} ms`);
  // A right password sent beside another slowed failure answers first: it is not slowed.
  const order: string[] = [];
  await Promise.all([
    attempt(member.email, '192.0.2.142').then((r) => {
      expectError(r, 401, 'unauthenticated');
      order.push('failure');
    }),
    attempt(member.email, '192.0.2.141', member.password).then((r) => {
      expectStatus(r, 201);
      order.push('success');
    }),
  ]);
  assert.deepEqual(order, ['success', 'failure']);
});

test('the failure and the throttle answer in the same words whether the account exists or not', async (t) => {
  freezeClock(t);
  const known = await attempt(member.email, '198.51.100.1');
  const unknown = await attempt('ghost@example.test', '198.51.100.2');
  expectError(known, 401, 'unauthenticated');
  assert.deepEqual(unknown.body, known.body);
  for (let i = 0; i < 10; i++) {
    await attempt(member.email, '198.51.100.10');
    await attempt('ghost@example.test', '198.51.100.30');
  }
  const a = await attempt(member.email, '198.51.100.10');
  const b = await attempt('ghost@example.test', '198.51.100.30');
  expectError(a, 429, 'resource_exhausted');
  assert.deepEqual(b.body, a.body);
  assert.equal(b.status, a.status);
});

test('two addresses in one IPv6 /64 share a sign-in bucket; the next /64 does not', async (t) => {
  freezeClock(t);
  for (let i = 0; i < 10; i++) {
    expectError(await attempt(`v6-${i}@example.test`, `2001:db8:1:2::${i + 1}`), 401, 'unauthenticated');
  }
  expectError(await attempt('v6-x@example.test', '2001:db8:1:2:ffff:1:2:3'), 429, 'resource_exhausted');
  expectError(await attempt('v6-y@example.test', '2001:db8:1:3::1'), 401, 'unauthenticated');
  assert.equal(addressKey('2001:db8:1:2::1'), addressKey('2001:DB8:0001:0002:ffff:1:2:3'));
  assert.equal(addressKey('::ffff:192.0.2.1'), '192.0.2.1');
  assert.equal(addressKey('192.0.2.1'), '192.0.2.1');
  assert.equal(addressKey('::1'), '0:0:0:0::/64');
});

test('a full limiter evicts the least recently touched key and keeps the others’ state', () => {
  const limiter = new RateLimiter({ perSecond: 1, burst: 2 }, 3);
  const now = 1_000_000;
  for (const key of ['a', 'b', 'c']) {
    assert.equal(limiter.take(key, now), 0);
    assert.equal(limiter.take(key, now), 0);
  }
  assert.ok(limiter.take('a', now) > 0, 'a is empty');
  limiter.take('d', now);
  assert.equal(limiter.has('b'), false, 'b was touched least recently');
  for (const key of ['a', 'c', 'd']) assert.ok(limiter.has(key), key);
  assert.ok(limiter.take('a', now) > 0, 'a is still empty: nobody’s state was reset');
  assert.ok(limiter.take('c', now) > 0, 'c is still empty');
});

test('N workflow tokens of one human share one per-credential budget', async (t) => {
  freezeClock(t);
  const secrets: string[] = [];
  for (let i = 0; i < 3; i++) {
    const minted = await h.post('/api/v1/tokens', { token: member.token, body: { name: `wf-${i}`, kind: 'workflow' } });
    expectStatus(minted, 201);
    secrets.push(minted.body.secret as string);
  }
  await h.fresh();
  const statuses: number[] = [];
  for (let i = 0; i < 60; i++) {
    const res = await h.get('/api/v1/whoami', { token: secrets[i % 3]!, remoteAddress: `203.0.113.${i + 1}` });
    statuses.push(res.status);
  }
  assert.equal(statuses.filter((s) => s !== 429).length, 40, statuses.join(','));
  assert.ok(
    statuses.slice(40).every((s) => s === 429),
    statuses.join(','),
  );
});
