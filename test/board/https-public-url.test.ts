// Pins what an https SWITCHBOARD_PUBLIC_URL turns on for browsers: the board's cookies are
// Secure even when the request itself arrives as plain http (a TLS-terminating proxy that
// is not trusted for X-Forwarded-Proto) and named with the `__Host-` prefix, and every
// answer carries HSTS for a year.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { completeSetup, ensureSetupLink } from '../../src/identity/setup.js';
import { testDatabase, type TestDatabase } from '../helpers/db.js';
import { testApp, testServices } from '../helpers/services.js';

const EMAIL = 'tls@example.test';
const PASSWORD = 'correct horse battery';
const PUBLIC_URL = 'https://switchboard.example.test';

// Top level, not in a hook: testDatabase registers the file's own `after` clean-up.
const db: TestDatabase = await testDatabase('board_https_url');
let app: FastifyInstance;

before(async () => {
  const identity = { db: db.pool, publicUrl: PUBLIC_URL };
  const link = await ensureSetupLink(identity);
  await completeSetup(identity, { token: link?.split('/').pop(), email: EMAIL, password: PASSWORD });
  // No trusted proxy: the requests below look like plain http to the server.
  const services = await testServices({ pool: db.pool, env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL } });
  app = testApp(services);
  await app.ready();
});
after(() => app.close());

let address: string | undefined;

/** The status of a /ws upgrade with this Cookie header, over a real socket. */
async function wsStatus(cookie: string): Promise<number> {
  address ??= await app.listen({ host: '127.0.0.1', port: 0 });
  const socket = new WebSocket(`${address.replace(/^http/, 'ws')}/ws`, { headers: { cookie } });
  return new Promise<number>((resolve) => {
    socket.on('open', () => {
      socket.close();
      resolve(101);
    });
    socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    socket.on('error', () => resolve(0));
  });
}

async function signInCookie(): Promise<string> {
  const form = await app.inject({ method: 'GET', url: '/login' });
  const loginCookie = form.cookies.find((c) => c.name === '__Host-sb_login_csrf');
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const response = await app.inject({
    method: 'POST',
    url: '/login',
    cookies: { '__Host-sb_login_csrf': loginCookie?.value ?? '' },
    payload: { csrf, email: EMAIL, password: PASSWORD },
  });
  assert.equal(response.statusCode, 303, response.body);
  return response.cookies.find((c) => c.name === '__Host-sb_session')?.value ?? '';
}

test('the login CSRF and session cookies are Secure, Path=/, host-only and __Host- named over a plain request when the public URL is https', async () => {
  const form = await app.inject({ method: 'GET', url: '/login' });
  assert.equal(
    form.cookies.find((c) => c.name === 'sb_login_csrf'),
    undefined,
    'no unprefixed cookie is set',
  );
  const loginCookie = form.cookies.find((c) => c.name === '__Host-sb_login_csrf');
  assert.equal(loginCookie?.secure, true);
  assert.equal(loginCookie.path, '/');
  assert.equal(loginCookie.domain, undefined);
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const response = await app.inject({
    method: 'POST',
    url: '/login',
    cookies: { '__Host-sb_login_csrf': loginCookie.value },
    payload: { csrf, email: EMAIL, password: PASSWORD },
  });
  assert.equal(response.statusCode, 303, response.body);
  assert.equal(
    response.cookies.find((c) => c.name === 'sb_session'),
    undefined,
  );
  const session = response.cookies.find((c) => c.name === '__Host-sb_session');
  assert.ok(session?.value);
  assert.equal(session.secure, true);
  assert.equal(session.httpOnly, true);
  assert.equal(session.path, '/');
  assert.equal(session.domain, undefined);
  const cleared = response.cookies.find((c) => c.name === '__Host-sb_login_csrf');
  assert.equal(cleared?.secure, true, 'the login CSRF cookie is cleared with Secure, or a browser ignores the clear');
});

test('the board and /ws read the __Host- session cookie, and the unprefixed name signs nobody in', async () => {
  const session = await signInCookie();
  assert.ok(session);
  const home = await app.inject({ method: 'GET', url: '/', cookies: { '__Host-sb_session': session } });
  assert.equal(home.statusCode, 200, home.body);
  const plain = await app.inject({ method: 'GET', url: '/', cookies: { sb_session: session } });
  assert.equal(plain.statusCode, 303);
  assert.equal(plain.headers.location, '/login');

  // /ws signs in before the upgrade: the unprefixed name is refused there, the prefixed one passes.
  const ws = await wsStatus(`__Host-sb_session=${session}`);
  assert.equal(ws, 101);
  assert.equal(await wsStatus(`sb_session=${session}`), 401);
});

test('signing out clears the __Host- session cookie with Secure', async () => {
  const session = await signInCookie();
  const home = await app.inject({ method: 'GET', url: '/', cookies: { '__Host-sb_session': session } });
  const csrf = /name="csrf" value="([^"]+)"/.exec(home.body)?.[1] ?? '';
  const out = await app.inject({
    method: 'POST',
    url: '/logout',
    cookies: { '__Host-sb_session': session },
    payload: { csrf },
  });
  assert.equal(out.statusCode, 303, out.body);
  const cleared = out.cookies.find((c) => c.name === '__Host-sb_session');
  assert.equal(cleared?.value, '');
  assert.equal(cleared.secure, true);
  const after = await app.inject({ method: 'GET', url: '/', cookies: { '__Host-sb_session': session } });
  assert.equal(after.statusCode, 303);
});

test('every answer carries Strict-Transport-Security for a year when the public URL is https', async () => {
  for (const url of ['/login', '/api/v1/whoami', '/healthz', '/no-such-route']) {
    const response = await app.inject({ method: 'GET', url });
    assert.equal(response.headers['strict-transport-security'], 'max-age=31536000', url);
  }
});
