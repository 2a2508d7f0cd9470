// Pins that a board WebSocket (/ws) lives no longer than the board session it was opened
// with (docs/design/people.md, "Board connections"): signing out, changing the password,
// spending a reset link, and the session's expiry each close it, on another instance
// sharing the database and bus within a second; and that one human holds at most
// SWITCHBOARD_WS_PER_HUMAN of them on an instance.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { NotifyBus } from '../../src/db/bus.js';
import { testDatabase } from '../helpers/db.js';
import { expectStatus, Harness, makePeople, PASSWORD, PUBLIC_URL, type Person } from './app.js';

const { pool, url } = await testDatabase('api_ws_sign_out');
const bus = new NotifyBus({ url });
await bus.start();
const ENV = { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL, SWITCHBOARD_WS_PER_HUMAN: '2' };
const a = await new Harness(pool).init({ bus, instanceId: 'instance-a', env: ENV });
const b = await new Harness(pool).init({ bus, instanceId: 'instance-b', env: ENV });
const { admin } = await makePeople(a);
await b.app.listen({ host: '127.0.0.1', port: 0 });
const bAddress = b.app.server.address();
assert.ok(bAddress && typeof bAddress === 'object');
const bUrl = `ws://127.0.0.1:${bAddress.port}`;
after(async () => {
  await a.close();
  await b.close();
  await bus.stop();
});

let addresses = 0;
/** A client address of its own, so no sign-in limit counts two calls together. */
const addr = () => `10.2.${Math.floor(++addresses / 250)}.${addresses % 250}`;

let humans = 0;
async function newHuman(): Promise<Person> {
  const email = `ws-person${++humans}@example.test`;
  const res = await a.post('/api/v1/humans', {
    token: admin.token,
    body: { email, password: PASSWORD, role: 'member' },
  });
  expectStatus(res, 201, 'create human');
  const login = await a.post('/api/v1/auth/login', { body: { email, password: PASSWORD }, remoteAddress: addr() });
  expectStatus(login, 201, 'login');
  return { human: login.body.human, email, password: PASSWORD, token: login.body.token, tokenId: login.body.token_id };
}

/** A board session on instance A through its sign-in form: the cookie and the session's CSRF token. */
async function boardSignIn(email: string, password = PASSWORD): Promise<{ cookie: string; csrf: string }> {
  const remoteAddress = addr();
  const form = await a.app.inject({ method: 'GET', url: '/login', remoteAddress });
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const loginCsrf = form.cookies.find((c) => c.name === 'sb_login_csrf')?.value ?? '';
  const res = await a.app.inject({
    method: 'POST',
    url: '/login',
    remoteAddress,
    cookies: { sb_login_csrf: loginCsrf },
    payload: { csrf, email, password },
  });
  const cookie = res.cookies.find((c) => c.name === 'sb_session')?.value;
  assert.ok(cookie, `board sign-in answered ${res.statusCode}`);
  const home = await a.app.inject({ method: 'GET', url: '/', cookies: { sb_session: cookie } });
  const sessionCsrf = /name="csrf" value="([^"]+)"/.exec(home.body)?.[1];
  assert.ok(sessionCsrf, 'the board home page carries the session CSRF token');
  return { cookie, csrf: sessionCsrf };
}

/** A /ws connection on instance B, open; `closed` resolves when the server closes it. */
async function openSocket(cookie: string) {
  const socket = new WebSocket(`${bUrl}/ws`, { headers: { cookie: `sb_session=${cookie}` } });
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.on('open', () => resolve());
    socket.on('error', reject);
  });
  after(() => socket.close());
  return { socket, closed };
}

function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

test('signing out on one instance closes that session’s /ws on another within 1 s, and leaves another session’s open', async () => {
  const person = await newHuman();
  const gone = await boardSignIn(person.email);
  const kept = await boardSignIn(person.email);
  const closing = await openSocket(gone.cookie);
  const staying = await openSocket(kept.cookie);
  const res = await a.app.inject({
    method: 'POST',
    url: '/logout',
    cookies: { sb_session: gone.cookie },
    payload: { csrf: gone.csrf },
  });
  assert.equal(res.statusCode, 303);
  assert.equal(await within(closing.closed, 1_000, 'the signed-out socket closing'), 1008);
  const stillOpen = await Promise.race([
    staying.closed.then(() => false),
    new Promise((r) => setTimeout(() => r(true), 300)),
  ]);
  assert.equal(stillOpen, true, 'the other session’s socket stays open');
});

test('changing one’s password closes every /ws of the human’s ended board sessions within 1 s', async () => {
  const person = await newHuman();
  const board = await boardSignIn(person.email);
  const socket = await openSocket(board.cookie);
  const res = await a.post('/api/v1/me/password', {
    token: person.token,
    remoteAddress: addr(),
    body: { current: PASSWORD, new: 'a whole new password' },
  });
  expectStatus(res, 200, 'password change');
  assert.equal(await within(socket.closed, 1_000, 'the socket closing after a password change'), 1008);
});

test('spending a reset link closes the human’s /ws within 1 s', async () => {
  const person = await newHuman();
  const board = await boardSignIn(person.email);
  const socket = await openSocket(board.cookie);
  const issued = await a.post(`/api/v1/humans/${person.human.id}/reset`, { token: admin.token });
  expectStatus(issued, 201, 'reset link');
  const link = String(issued.body.reset_url);
  const token = link.slice(link.lastIndexOf('/') + 1);
  const spent = await a.post('/api/v1/setup', { remoteAddress: addr(), body: { token, password: 'a reset password' } });
  assert.ok(spent.status < 300, `spending the link answered ${spent.status}`);
  assert.equal(await within(socket.closed, 1_000, 'the socket closing after a reset'), 1008);
});

test('a /ws closes when its board session expires', async () => {
  const person = await newHuman();
  const board = await boardSignIn(person.email);
  // Time moved in SQL: the session now ends in 1.5 s.
  await pool.query(`UPDATE board_sessions SET expires_at = now() + interval '1.5 seconds' WHERE human_id = $1`, [
    person.human.id,
  ]);
  const socket = await openSocket(board.cookie);
  assert.equal(await within(socket.closed, 3_000, 'the socket closing at its session’s expiry'), 1008);
});

test('a human holds at most SWITCHBOARD_WS_PER_HUMAN sockets on an instance: past it the upgrade answers 429', async () => {
  const person = await newHuman();
  const board = await boardSignIn(person.email);
  const first = await openSocket(board.cookie);
  await openSocket(board.cookie);
  const refused = await new Promise<number>((resolve, reject) => {
    const socket = new WebSocket(`${bUrl}/ws`, { headers: { cookie: `sb_session=${board.cookie}` } });
    socket.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    socket.on('open', () => reject(new Error('a third socket opened')));
    socket.on('error', () => undefined);
  });
  assert.equal(refused, 429);
  // Another human is not held back, and a closed socket frees its place.
  const other = await newHuman();
  await openSocket((await boardSignIn(other.email)).cookie);
  first.socket.close();
  await first.closed;
  await new Promise((r) => setTimeout(r, 50));
  await openSocket(board.cookie);
});
