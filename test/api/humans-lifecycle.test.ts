// Pins the human lifecycle (docs/design/people.md) on two instances sharing one database
// and bus: disabling cuts a human off everywhere (token, board session and its open
// WebSocket, endpoint credential, live MCP session), enabling restores sign-in but not the tokens, the last
// active admin is protected (a real race included), reset links, own password changes,
// the sliding login-token expiry, deletion with and without transfer, and the admin's
// token routes.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import WebSocket from 'ws';
import { NotifyBus } from '../../src/db/bus.js';
import { isAppError } from '../../src/domain/errors.js';
import { updateHuman } from '../../src/identity/lifecycle.js';
import type { Principal } from '../../src/identity/principal.js';
import { testDatabase } from '../helpers/db.js';
import { connect, raw } from '../mcp/harness.js';
import { expectError, expectStatus, Harness, makePeople, PASSWORD, PUBLIC_URL, vend, type Person } from './app.js';

const { pool, url } = await testDatabase('api_humans_lifecycle');
const bus = new NotifyBus({ url });
await bus.start();
// Credential answers are reused far longer than the tests wait, so a refusal below is the
// bus's doing (or this process's own forget), never the reuse running out.
const ENV = { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL, SWITCHBOARD_MCP_CREDENTIAL_REUSE: '10m' };
const a = await new Harness(pool).init({ bus, instanceId: 'instance-a', env: ENV });
const b = await new Harness(pool).init({ bus, instanceId: 'instance-b', env: ENV });
const { admin, member, other } = await makePeople(a);
const aUrl = await listen(a);
const bUrl = await listen(b);
after(async () => {
  await a.close();
  await b.close();
  await bus.stop();
});

async function listen(h: Harness): Promise<string> {
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  const address = h.app.server.address();
  assert.ok(address && typeof address === 'object');
  return `http://127.0.0.1:${address.port}`;
}

let addresses = 0;
/** A client address of its own: the per-address sign-in limit never counts two calls together. */
const addr = () => `10.1.${Math.floor(++addresses / 250)}.${addresses % 250}`;
/** Signs in from an address of its own, so the per-address sign-in limit never counts these. */
async function signIn(h: Harness, email: string, password = PASSWORD): Promise<Person> {
  const res = await h.post('/api/v1/auth/login', {
    body: { email, password },
    remoteAddress: addr(),
  });
  expectStatus(res, 201, `login ${email}`);
  return { human: res.body.human, email, password, token: res.body.token, tokenId: res.body.token_id };
}

let humans = 0;
/** A new human made by the admin through the API, signed in. */
async function newHuman(role: 'admin' | 'member' = 'member'): Promise<Person> {
  const email = `person${++humans}@example.test`;
  const res = await a.post('/api/v1/humans', { token: admin.token, body: { email, password: PASSWORD, role } });
  expectStatus(res, 201, 'create human');
  return signIn(a, email);
}

/** A board session cookie through the board's own sign-in form. */
async function boardCookie(h: Harness, email: string, password = PASSWORD) {
  const remoteAddress = addr();
  const form = await h.app.inject({ method: 'GET', url: '/login', remoteAddress });
  const csrf = /name="csrf" value="([^"]+)"/.exec(form.body)?.[1] ?? '';
  const loginCsrf = form.cookies.find((c) => c.name === 'sb_login_csrf')?.value ?? '';
  const res = await h.app.inject({
    method: 'POST',
    url: '/login',
    remoteAddress,
    cookies: { sb_login_csrf: loginCsrf },
    payload: { csrf, email, password },
  });
  return { status: res.statusCode, body: res.body, cookie: res.cookies.find((c) => c.name === 'sb_session')?.value };
}

/** Whether the board takes this session cookie: its home page, or a redirect to sign in. */
async function boardTakes(h: Harness, cookie: string): Promise<boolean> {
  const res = await h.app.inject({ method: 'GET', url: '/', cookies: { sb_session: cookie } });
  return res.statusCode === 200;
}

function patch(h: Harness, id: string, token: string, body: unknown) {
  return h.request('PATCH', `/api/v1/humans/${id}`, { token, body });
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

/** Opens the session's notification stream on `base`; `ended` resolves when the server ends it. */
async function openStream(base: string, credential: string, sessionId: string) {
  const response = await fetch(`${base}/mcp`, {
    headers: { authorization: `Bearer ${credential}`, 'mcp-session-id': sessionId, accept: 'text/event-stream' },
  });
  assert.equal(response.status, 200);
  const reader = response.body?.getReader();
  assert.ok(reader);
  const ended = (async () => {
    for (;;) {
      const chunk = await reader.read().catch(() => ({ done: true }));
      if (chunk.done) return true;
    }
  })();
  return { ended };
}

/** A board WebSocket on `base` signed in by the cookie, open; `closed` resolves when the server closes it. */
async function openSocket(base: string, cookie: string) {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/ws`, { headers: { cookie: `sb_session=${cookie}` } });
  const closed = new Promise<boolean>((resolve) => socket.on('close', () => resolve(true)));
  await new Promise<void>((resolve, reject) => {
    socket.on('open', () => resolve());
    socket.on('error', reject);
  });
  after(() => socket.close());
  return { closed };
}

/** tools/list on `base` until it answers `status`; throws when that takes longer than `ms`. */
async function answers(base: string, headers: Record<string, string>, status: number, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const res = await raw(base, 'POST', headers, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    if (res.status === status) return;
    if (Date.now() > deadline) throw new Error(`${base} answered ${res.status}, not ${status}, for ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '0' } },
};

test('disabling a human refuses their token, board session and endpoint credential and closes their live MCP session on both instances within 1 s; enabling restores sign-in, not tokens', async () => {
  const person = await newHuman();
  const { credential, endpoint } = await vend(a, person);
  const board = await boardCookie(a, person.email);
  assert.ok(board.cookie);
  assert.ok(await boardTakes(b, board.cookie));
  const c = await connect(aUrl, credential);
  const stream = await openStream(bUrl, credential, c.sessionId);
  const socket = await openSocket(bUrl, board.cookie);
  const mcpHeaders = { authorization: `Bearer ${credential}`, 'mcp-session-id': c.sessionId };
  // Both instances now hold a reused answer for (credential, session).
  await answers(aUrl, mcpHeaders, 200);
  await answers(bUrl, mcpHeaders, 200);

  const res = await patch(a, person.human.id, admin.token, { state: 'disabled' });
  expectStatus(res, 200);
  assert.equal(res.body.human.state, 'disabled');
  assert.deepEqual(res.body.ended, { tokens_revoked: 1, board_sessions_ended: 1, sessions_closed: 1 });

  await within(
    Promise.all([
      stream.ended,
      socket.closed,
      answers(aUrl, mcpHeaders, 401, 1_000),
      answers(bUrl, mcpHeaders, 401, 1_000),
    ]),
    1_000,
    'the MCP stream and the board socket on B ending and both instances refusing the credential',
  );
  for (const [h, base] of [
    [a, aUrl],
    [b, bUrl],
  ] as const) {
    expectError(await h.get('/api/v1/whoami', { token: person.token }), 401, 'unauthenticated');
    assert.equal(await boardTakes(h, board.cookie), false);
    const init = await raw(base, 'POST', { authorization: `Bearer ${credential}` }, INITIALIZE);
    assert.equal(init.status, 401, `a new MCP session on ${base}`);
  }
  const sessions = await pool.query('SELECT closed_at FROM mcp_sessions WHERE endpoint_id = $1', [endpoint.id]);
  assert.ok(sessions.rows.every((r) => r.closed_at !== null));

  // The same answer as a wrong password, on the API and on the board.
  const wrong = await a.post('/api/v1/auth/login', {
    body: { email: person.email, password: 'not the password' },
    remoteAddress: '10.8.0.1',
  });
  const disabled = await a.post('/api/v1/auth/login', {
    body: { email: person.email, password: PASSWORD },
    remoteAddress: '10.8.0.2',
  });
  expectError(disabled, 401, 'unauthenticated');
  assert.deepEqual(disabled.body, wrong.body);
  const boardRefused = await boardCookie(b, person.email);
  assert.equal(boardRefused.status, 401);
  assert.match(boardRefused.body, /email or password is wrong/);
  assert.equal(boardRefused.cookie, undefined);

  expectStatus(await patch(b, person.human.id, admin.token, { state: 'active' }), 200);
  expectError(await a.get('/api/v1/whoami', { token: person.token }), 401, 'unauthenticated');
  const again = await signIn(b, person.email);
  expectStatus(await a.get('/api/v1/whoami', { token: again.token }), 200);
  const back = await connect(bUrl, credential);
  assert.ok(back.sessionId, 'the endpoint credential works again');

  const audit = await pool.query<{ action: string; actor_human_id: string }>(
    'SELECT action, actor_human_id FROM human_audit WHERE human_id = $1 ORDER BY id',
    [person.human.id],
  );
  assert.deepEqual(
    audit.rows.map((r) => [r.action, r.actor_human_id]),
    [
      ['create', admin.human.id],
      ['disable', admin.human.id],
      ['enable', admin.human.id],
    ],
  );
});

test('the last active admin can be neither disabled, demoted nor deleted; a bad body names its field; a member gets 403 on every admin route', async () => {
  // Only the first admin is an active admin here (the race test makes its own).
  await pool.query(`UPDATE humans SET role = 'member' WHERE role = 'admin' AND id <> $1`, [admin.human.id]);
  expectError(await patch(a, admin.human.id, admin.token, { state: 'disabled' }), 409, 'failed_precondition');
  expectError(await patch(a, admin.human.id, admin.token, { role: 'member' }), 409, 'failed_precondition');
  expectError(await a.delete(`/api/v1/humans/${admin.human.id}`, { token: admin.token }), 409, 'failed_precondition');
  for (const body of [{}, { state: 'gone' }, { role: 'owner' }, { state: 'active', extra: 1 }]) {
    const res = await patch(a, other.human.id, admin.token, body);
    expectError(res, 400, 'invalid_argument', undefined, JSON.stringify(body));
    assert.ok(['state', 'role', 'extra'].includes(res.body.error.details.field), res.text);
  }
  expectError(await patch(a, 'hu_unknown', admin.token, { state: 'disabled' }), 404, 'not_found');
  const still = await pool.query('SELECT state, role FROM humans WHERE id = $1', [admin.human.id]);
  assert.deepEqual(still.rows[0], { state: 'active', role: 'admin' });

  for (const [method, path] of [
    ['PATCH', `/api/v1/humans/${other.human.id}`],
    ['DELETE', `/api/v1/humans/${other.human.id}`],
    ['POST', `/api/v1/humans/${other.human.id}/reset`],
    ['GET', `/api/v1/humans/${other.human.id}/tokens`],
    ['DELETE', `/api/v1/humans/${other.human.id}/tokens/${other.tokenId}`],
  ] as const) {
    const res = await a.request(method, path, { token: member.token, body: { state: 'disabled' } });
    expectError(res, 403, 'forbidden', undefined, `${method} ${path}`);
  }
  expectStatus(await a.get('/api/v1/whoami', { token: other.token }), 200);
});

test('two admins disabling each other at once: exactly one succeeds and one active admin remains', async () => {
  const second = await newHuman('admin');
  const principal = (p: Person): Principal => ({
    human: { ...p.human, created_at: new Date(p.human.created_at) },
    token: null,
  });
  for (let round = 0; round < 5; round++) {
    const results = await Promise.allSettled([
      updateHuman(a.services.identity, principal(admin), second.human.id, { state: 'disabled' }),
      updateHuman(b.services.identity, principal(second), admin.human.id, { state: 'disabled' }),
    ]);
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r) => r.status === 'rejected');
    assert.equal(won.length, 1, `round ${round}`);
    assert.ok(isAppError(lost[0]?.reason, 'failed_precondition'), String(lost[0]?.reason));
    const active = await pool.query(`SELECT id FROM humans WHERE role = 'admin' AND state = 'active'`);
    assert.equal(active.rows.length, 1, `round ${round}`);
    await pool.query(`UPDATE humans SET state = 'active' WHERE id = ANY($1)`, [[admin.human.id, second.human.id]]);
  }
  // The admin's own token went with one of the rounds it lost: sign in again for the rest.
  Object.assign(admin, await signIn(a, admin.email));
});

test('an admin-issued reset link sets a new password once, ends the human’s sign-ins, and expires after an hour', async () => {
  const person = await newHuman();
  const issued = await a.post(`/api/v1/humans/${person.human.id}/reset`, { token: admin.token });
  expectStatus(issued, 201);
  const resetUrl = String(issued.body.reset_url);
  assert.ok(resetUrl.startsWith(`${PUBLIC_URL}/setup/sbs_`));
  const lifetime = Date.parse(issued.body.expires_at) - Date.now();
  assert.ok(lifetime > 3_000_000 && lifetime <= 3_600_000, String(lifetime));
  const token = resetUrl.slice(resetUrl.lastIndexOf('/') + 1);
  // The board's setup page takes the link (it sets a password for a known human).
  const page = await a.app.inject({ method: 'GET', url: `/setup/${token}` });
  assert.equal(page.statusCode, 200);

  const spent = await a.post('/api/v1/setup', {
    remoteAddress: addr(),
    body: { token, password: 'a brand new password' },
  });
  expectStatus(spent, 201);
  assert.equal(spent.body.human.id, person.human.id);
  expectError(
    await a.post('/api/v1/setup', { remoteAddress: addr(), body: { token, password: 'yet another password' } }),
    401,
    'unauthenticated',
    'token',
  );
  expectError(await a.get('/api/v1/whoami', { token: person.token }), 401, 'unauthenticated');
  await signIn(a, person.email, 'a brand new password');

  // A newer link kills the older one; a link past its hour is refused.
  const first = await a.post(`/api/v1/humans/${person.human.id}/reset`, { token: admin.token });
  const second = await a.post(`/api/v1/humans/${person.human.id}/reset`, { token: admin.token });
  const linkOf = (r: { body: { reset_url: string } }) => r.body.reset_url.slice(r.body.reset_url.lastIndexOf('/') + 1);
  expectError(
    await a.post('/api/v1/setup', {
      remoteAddress: addr(),
      body: { token: linkOf(first), password: 'password number three' },
    }),
    401,
    'unauthenticated',
  );
  await pool.query(
    `UPDATE setup_tokens SET expires_at = now() - interval '1 second' WHERE human_id = $1 AND used_at IS NULL`,
    [person.human.id],
  );
  expectError(
    await a.post('/api/v1/setup', {
      remoteAddress: addr(),
      body: { token: linkOf(second), password: 'password number three' },
    }),
    401,
    'unauthenticated',
  );

  expectStatus(await patch(a, person.human.id, admin.token, { state: 'disabled' }), 200);
  expectError(
    await a.post(`/api/v1/humans/${person.human.id}/reset`, { token: admin.token }),
    409,
    'failed_precondition',
  );
  const audit = await pool.query(
    `SELECT count(*)::int AS n FROM human_audit WHERE human_id = $1 AND action = 'reset'`,
    [person.human.id],
  );
  assert.equal(audit.rows[0].n, 3);
  // A field the reset body does not know is named, and nothing is issued.
  expectError(
    await a.post(`/api/v1/humans/${admin.human.id}/reset`, { token: admin.token, body: { revoke_grants: true } }),
    400,
    'invalid_argument',
    'revoke_grants',
  );
  expectError(
    await a.post(`/api/v1/humans/${admin.human.id}/reset`, {
      token: admin.token,
      body: { rotate_endpoint_credentials: 'yes' },
    }),
    400,
    'invalid_argument',
    'rotate_endpoint_credentials',
  );
});

test('changing one’s own password ends other tokens and board sessions unless keep_sessions; a wrong current password changes nothing', async () => {
  const person = await newHuman();
  const second = await signIn(a, person.email);
  const board = await boardCookie(a, person.email);
  assert.ok(board.cookie);

  const wrong = await a.post('/api/v1/me/password', {
    remoteAddress: addr(),
    token: person.token,
    body: { current: 'not the password', new: 'a whole new password' },
  });
  expectError(wrong, 400, 'invalid_argument', 'current');

  const kept = await a.post('/api/v1/me/password', {
    remoteAddress: addr(),
    token: person.token,
    body: { current: PASSWORD, new: 'a whole new password', keep_sessions: true },
  });
  expectStatus(kept, 200);
  assert.deepEqual(kept.body, { changed: true, tokens_revoked: 0, board_sessions_ended: 0 });
  expectStatus(await a.get('/api/v1/whoami', { token: second.token }), 200);
  assert.ok(await boardTakes(a, board.cookie));

  const ended = await a.post('/api/v1/me/password', {
    remoteAddress: addr(),
    token: person.token,
    body: { current: 'a whole new password', new: 'and one more password' },
  });
  expectStatus(ended, 200);
  assert.deepEqual(ended.body, { changed: true, tokens_revoked: 1, board_sessions_ended: 1 });
  expectStatus(await a.get('/api/v1/whoami', { token: person.token }), 200);
  expectError(await a.get('/api/v1/whoami', { token: second.token }), 401, 'unauthenticated');
  assert.equal(await boardTakes(a, board.cookie), false);
  await signIn(a, person.email, 'and one more password');
});

test('a login token’s expiry slides on use (written at most about once a minute) and past it the token is refused as expired; workflow tokens keep theirs', async () => {
  const person = await newHuman();
  const expiryOf = async (id: string) =>
    (await pool.query<{ e: Date | null }>('SELECT expires_at AS e FROM api_tokens WHERE id = $1', [id])).rows[0]?.e;
  // The first use stamps last_used_at (and the expiry with it).
  expectStatus(await a.get('/api/v1/whoami', { token: person.token }), 200);
  const initial = await expiryOf(person.tokenId);
  assert.ok(initial, 'a login token has an expiry');
  const ttl = initial.getTime() - Date.now();
  assert.ok(ttl > 29 * 86_400_000 && ttl <= 30 * 86_400_000, `the default TTL is 30 days: ${ttl}`);

  // Used within the minute: nothing is written.
  expectStatus(await a.get('/api/v1/whoami', { token: person.token }), 200);
  assert.equal((await expiryOf(person.tokenId))?.getTime(), initial.getTime());

  // Near its end, a use pushes it back to now + TTL.
  await pool.query(
    `UPDATE api_tokens SET expires_at = now() + interval '1 hour', last_used_at = now() - interval '2 minutes' WHERE id = $1`,
    [person.tokenId],
  );
  expectStatus(await b.get('/api/v1/whoami', { token: person.token }), 200);
  const slid = await expiryOf(person.tokenId);
  assert.ok(slid && slid.getTime() - Date.now() > 29 * 86_400_000, String(slid));

  await pool.query(`UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1`, [person.tokenId]);
  const expired = await a.get('/api/v1/whoami', { token: person.token });
  expectError(expired, 401, 'unauthenticated');
  assert.equal(expired.body.error.details.reason, 'token_expired');
  assert.match(expired.body.error.message, /expired/);

  const fresh = await signIn(a, person.email);
  const minted = await a.post('/api/v1/tokens', { token: fresh.token, body: { name: 'ci', kind: 'workflow' } });
  expectStatus(minted, 201);
  await pool.query(`UPDATE api_tokens SET last_used_at = now() - interval '2 minutes' WHERE id = $1`, [
    minted.body.token.id,
  ]);
  const { endpoint } = await vend(a, fresh);
  const pushed = await a.post(`/api/v1/endpoints/${endpoint.slug}/todos`, {
    token: minted.body.secret,
    body: { queue: 'inbox', title: 'from ci' },
  });
  expectStatus(pushed, 201);
  assert.equal(await expiryOf(minted.body.token.id), null, 'a workflow token gets no sliding expiry');
});

test('an admin lists a human’s tokens and revokes one; the revoke is audited and an unknown token answers 404', async () => {
  const person = await newHuman();
  const listed = await a.get(`/api/v1/humans/${person.human.id}/tokens`, { token: admin.token });
  expectStatus(listed, 200);
  assert.deepEqual(
    (listed.body.tokens as { id: string }[]).map((t) => t.id),
    [person.tokenId],
  );
  const revoked = await a.delete(`/api/v1/humans/${person.human.id}/tokens/${person.tokenId}`, { token: admin.token });
  expectStatus(revoked, 200);
  assert.ok(revoked.body.token.revoked_at);
  expectError(await b.get('/api/v1/whoami', { token: person.token }), 401, 'unauthenticated');
  expectError(
    await a.delete(`/api/v1/humans/${person.human.id}/tokens/${other.tokenId}`, { token: admin.token }),
    404,
    'not_found',
  );
  const audit = await pool.query(`SELECT detail FROM human_audit WHERE human_id = $1 AND action = 'token_revoke'`, [
    person.human.id,
  ]);
  assert.equal(audit.rows[0]?.detail.token_id, person.tokenId);
});

test('deleting a human hands their endpoints to another human, or revokes and removes them', async () => {
  const leaving = await newHuman();
  const kept = await vend(a, leaving);
  const heir = await newHuman();
  expectError(
    await a.request('DELETE', `/api/v1/humans/${leaving.human.id}`, {
      token: admin.token,
      body: { transfer_endpoints_to: leaving.human.id },
    }),
    400,
    'invalid_argument',
    'transfer_endpoints_to',
  );
  const moved = await a.request('DELETE', `/api/v1/humans/${leaving.human.id}`, {
    token: admin.token,
    body: { transfer_endpoints_to: heir.human.id },
  });
  expectStatus(moved, 200);
  assert.deepEqual(moved.body, { deleted: true, endpoints_transferred: 1 });
  expectStatus(await a.get(`/api/v1/endpoints/${kept.endpoint.slug}`, { token: heir.token }), 200);
  await connect(bUrl, kept.credential);
  expectError(await a.get(`/api/v1/humans/${leaving.human.id}`, { token: admin.token }), 404, 'not_found');

  const gone = await newHuman();
  const removed = await vend(a, gone);
  const c = await connect(aUrl, removed.credential);
  const res = await a.delete(`/api/v1/humans/${gone.human.id}`, { token: admin.token });
  expectStatus(res, 200);
  assert.deepEqual(res.body, { deleted: true, endpoints_revoked: 1 });
  const rows = await pool.query('SELECT 1 FROM endpoints WHERE id = $1', [removed.endpoint.id]);
  assert.equal(rows.rowCount, 0);
  const headers = { authorization: `Bearer ${removed.credential}`, 'mcp-session-id': c.sessionId };
  await answers(bUrl, headers, 401, 1_000);
  const audit = await pool.query<{ action: string; detail: Record<string, number> }>(
    `SELECT action, detail FROM human_audit WHERE human_id = ANY($1) AND action = 'delete' ORDER BY id`,
    [[leaving.human.id, gone.human.id]],
  );
  assert.deepEqual(
    audit.rows.map((r) => [r.action, r.detail.endpoints_moved ?? r.detail.endpoints_revoked]),
    [
      ['delete', 1],
      ['delete', 1],
    ],
  );
});

test('an admin reads what was done to a human, newest first, a page at a time; bad paging is refused by field', async () => {
  const person = await newHuman();
  for (const body of [{ state: 'disabled' }, { state: 'active' }, { role: 'admin' }, { role: 'member' }]) {
    expectStatus(
      await a.request('PATCH', `/api/v1/humans/${person.human.id}`, { token: admin.token, body }),
      200,
      JSON.stringify(body),
    );
  }
  const stored = await pool.query<{ action: string }>(
    `SELECT action FROM human_audit WHERE human_id = $1 ORDER BY at DESC, id DESC`,
    [person.human.id],
  );
  assert.ok(stored.rows.length >= 4);
  const seen: string[] = [];
  let before: string | null = null;
  for (let pages = 0; pages < 10; pages++) {
    const query: string = `limit=2${before ? `&before=${before}` : ''}`;
    const page = await b.get(`/api/v1/humans/${person.human.id}/audit?${query}`, { token: admin.token });
    expectStatus(page, 200);
    const entries = page.body.entries as Array<{ action: string; actor_email: string | null; at: string }>;
    assert.ok(entries.length <= 2);
    for (const e of entries) {
      seen.push(e.action);
      assert.ok(!Number.isNaN(Date.parse(e.at)));
    }
    if (entries[0]?.action === 'role') assert.equal(entries[0].actor_email, admin.email);
    before = page.body.next_before as string | null;
    if (before === null) break;
  }
  assert.deepEqual(
    seen,
    stored.rows.map((r) => r.action),
  );
  assert.deepEqual(seen.slice(0, 4), ['role', 'role', 'enable', 'disable']);
  expectError(
    await a.get(`/api/v1/humans/${person.human.id}/audit?limit=0`, { token: admin.token }),
    400,
    'invalid_argument',
    'limit',
  );
  expectError(
    await a.get(`/api/v1/humans/${person.human.id}/audit?before=x`, { token: admin.token }),
    400,
    'invalid_argument',
    'before',
  );
  expectError(
    await a.get(`/api/v1/humans/hu_00000000000000000000000000/audit`, { token: admin.token }),
    404,
    'not_found',
  );
  expectError(await a.get(`/api/v1/humans/${person.human.id}/audit`, { token: member.token }), 403, 'forbidden');
});
