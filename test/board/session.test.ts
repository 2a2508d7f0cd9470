// Pins board sign-in: an opaque HttpOnly SameSite=Lax cookie hashed at rest, CSRF on
// every state-changing form, expiry, and sign-out that ends the session.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { completeSetup, ensureSetupLink } from '../../src/identity/setup.js';
import { testDatabase, type TestDatabase } from '../helpers/db.js';
import { testApp, testServices } from '../helpers/services.js';

const EMAIL = 'board@example.test';
const PASSWORD = 'correct horse battery';

// Top level, not in a hook: testDatabase registers the file's own `after` clean-up.
const db: TestDatabase = await testDatabase('board_session');
let app: FastifyInstance;

before(async () => {
  const identity = { db: db.pool, publicUrl: 'http://127.0.0.1:8080' };
  const link = await ensureSetupLink(identity);
  await completeSetup(identity, { token: link?.split('/').pop(), email: EMAIL, password: PASSWORD });
  const services = await testServices({
    pool: db.pool,
    // inject() connects from 127.0.0.1: trusting it lets a test say "this came over TLS".
    env: { SWITCHBOARD_PUBLIC_URL: identity.publicUrl, SWITCHBOARD_TRUST_PROXY: '127.0.0.1' },
  });
  app = testApp(services);
  await app.ready();
});
after(() => app.close());

function cookieOf(response: { cookies: Array<{ name: string; value: string }> }, name: string): string | undefined {
  return response.cookies.find((c) => c.name === name)?.value;
}

async function signIn(headers: Record<string, string> = {}) {
  const form = await app.inject({ method: 'GET', url: '/login', headers });
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const loginCookie = cookieOf(form, 'sb_login_csrf') ?? '';
  return app.inject({
    method: 'POST',
    url: '/login',
    headers: { ...headers, cookie: `sb_login_csrf=${loginCookie}` },
    payload: { csrf, email: EMAIL, password: PASSWORD },
  });
}

test('signing in sets an opaque HttpOnly SameSite=Lax session cookie whose hash, not value, is stored', async () => {
  const response = await signIn();
  assert.equal(response.statusCode, 303, response.body);
  assert.equal(response.headers.location, '/');
  const cookie = response.cookies.find((c) => c.name === 'sb_session');
  assert.ok(cookie && cookie.value.startsWith('sbx_'));
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Lax');
  assert.notEqual(cookie.secure, true);
  const stored = await db.pool.query<{ token_hash: Buffer }>('SELECT token_hash FROM board_sessions');
  const hashes = stored.rows.map((r) => r.token_hash.toString('hex'));
  assert.ok(hashes.includes(createHash('sha256').update(cookie.value).digest('hex')));
  const raw = await db.pool.query(`SELECT 1 FROM board_sessions WHERE encode(token_hash, 'escape') LIKE '%sbx_%'`);
  assert.equal(raw.rowCount, 0);

  const home = await app.inject({ method: 'GET', url: '/', cookies: { sb_session: cookie.value } });
  assert.equal(home.statusCode, 200);
  assert.match(home.body, /board@example\.test/);
});

test('behind TLS the session cookie is Secure', async () => {
  const response = await signIn({ 'x-forwarded-proto': 'https' });
  assert.equal(response.statusCode, 303);
  assert.equal(response.cookies.find((c) => c.name === 'sb_session')?.secure, true);
});

test('a sign-in form without its CSRF token, or with a wrong password, signs nobody in', async () => {
  const noCsrf = await app.inject({ method: 'POST', url: '/login', payload: { email: EMAIL, password: PASSWORD } });
  assert.equal(noCsrf.statusCode, 403);
  assert.equal(cookieOf(noCsrf, 'sb_session'), undefined);

  const form = await app.inject({ method: 'GET', url: '/login' });
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const wrong = await app.inject({
    method: 'POST',
    url: '/login',
    cookies: { sb_login_csrf: cookieOf(form, 'sb_login_csrf') ?? '' },
    payload: { csrf, email: EMAIL, password: 'not the password' },
  });
  assert.equal(wrong.statusCode, 401);
  assert.match(wrong.body, /email or password is wrong/);
  assert.equal(cookieOf(wrong, 'sb_session'), undefined);
});

test('sign-out needs the session CSRF token, then ends the session for good', async () => {
  const session = cookieOf(await signIn(), 'sb_session') ?? '';
  const home = await app.inject({ method: 'GET', url: '/', cookies: { sb_session: session } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(home.body)?.[1] ?? '';

  const forged = await app.inject({ method: 'POST', url: '/logout', cookies: { sb_session: session }, payload: {} });
  assert.equal(forged.statusCode, 403);
  assert.equal((await app.inject({ method: 'GET', url: '/', cookies: { sb_session: session } })).statusCode, 200);

  const out = await app.inject({ method: 'POST', url: '/logout', cookies: { sb_session: session }, payload: { csrf } });
  assert.equal(out.statusCode, 303);
  assert.equal(out.headers.location, '/login');
  const after = await app.inject({ method: 'GET', url: '/', cookies: { sb_session: session } });
  assert.equal(after.statusCode, 303);
  assert.equal(after.headers.location, '/login');
});

test('an expired session is refused', async () => {
  const session = cookieOf(await signIn(), 'sb_session') ?? '';
  const hash = createHash('sha256').update(session).digest();
  await db.pool.query(`UPDATE board_sessions SET expires_at = now() - interval '1 second' WHERE token_hash = $1`, [
    hash,
  ]);
  const home = await app.inject({ method: 'GET', url: '/', cookies: { sb_session: session } });
  assert.equal(home.statusCode, 303);
  assert.equal(home.headers.location, '/login');
});

test('a board session cookie opens no /api/v1 route', async () => {
  const session = cookieOf(await signIn(), 'sb_session') ?? '';
  const api = await app.inject({ method: 'GET', url: '/api/v1/whoami', cookies: { sb_session: session } });
  assert.equal(api.statusCode, 401);
});

test('with an http public URL a plain request gets no Secure cookie, no __Host- name and no Strict-Transport-Security', async () => {
  const response = await signIn();
  assert.equal(response.statusCode, 303);
  assert.notEqual(response.cookies.find((c) => c.name === 'sb_session')?.secure, true);
  assert.ok(
    response.cookies.every((c) => !c.name.startsWith('__Host-')),
    'no __Host- name: a browser refuses one that is not Secure',
  );
  assert.equal(response.headers['strict-transport-security'], undefined);
  const form = await app.inject({ method: 'GET', url: '/login' });
  assert.equal(form.headers['strict-transport-security'], undefined);
});
