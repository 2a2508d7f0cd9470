// Pins the one-time setup link on a fresh install: the HTML page and form (refusing a
// cross-site post: login CSRF), POST /api/v1/setup, and that a link makes one admin.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { ensureSetupLink } from '../../src/identity/setup.js';
import { apiHarness, expectError, expectStatus, login, tableCounts, PASSWORD, PUBLIC_URL, type Reply } from './app.js';

const h = await apiHarness('api_setup_page');
const identity = { db: h.pool, publicUrl: PUBLIC_URL };
beforeEach(() => h.fresh());

async function humans(): Promise<{ email: string; role: string }[]> {
  return (await h.pool.query<{ email: string; role: string }>('SELECT email, role FROM humans ORDER BY created_at'))
    .rows;
}

function tokenOf(link: string): string {
  return link.slice(link.lastIndexOf('/') + 1);
}

function form(fields: Record<string, string>): { payload: string; headers: Record<string, string> } {
  return {
    payload: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  };
}

/** The setup page as a browser opens it: its form's CSRF field and the cookie set with it. */
async function openForm(token: string): Promise<{ csrf: string; cookie: string }> {
  const page = await h.app.inject({ method: 'GET', url: `/setup/${token}` });
  const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
  const cookie = page.cookies.find((c) => c.name === 'sb_login_csrf')?.value ?? '';
  assert.ok(csrf && cookie, 'the setup page sets a CSRF cookie and field');
  return { csrf, cookie };
}

/** Posts the setup form from the page `opened`: with its CSRF field and cookie. */
async function postSetup(
  token: string,
  opened: { csrf: string; cookie: string },
  fields: Record<string, string>,
): Promise<Reply> {
  const res = await h.app.inject({
    method: 'POST',
    url: `/setup/${token}`,
    cookies: { sb_login_csrf: opened.cookie },
    ...form({ ...fields, csrf: opened.csrf }),
  });
  return { status: res.statusCode, headers: res.headers, body: undefined, text: res.body };
}

// These run in order on one database: the first admin is made part way through.

test('a setup link rejected for a missing email is still live for the corrected retry', async () => {
  const link = await ensureSetupLink(identity);
  assert.ok(link);
  const token = tokenOf(link);
  const missing = await h.post('/api/v1/setup', { body: { token, password: PASSWORD } });
  expectError(missing, 400, 'invalid_argument', 'email');
  const page = await h.get(`/setup/${token}`);
  expectStatus(page, 200, 'the page for a link a rejected attempt did not spend');
});

test('the setup page shows an HTML form for a live link', async () => {
  await h.pool.query('UPDATE setup_tokens SET used_at = now() WHERE used_at IS NULL');
  const link = await ensureSetupLink(identity);
  assert.ok(link, 'no humans yet, so a link is minted');
  assert.match(link, new RegExp(`^${PUBLIC_URL}/setup/sbs_[A-Za-z0-9_-]+$`));
  const res = await h.get(`/setup/${tokenOf(link)}`);
  expectStatus(res, 200);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.match(res.text, /<form method="post" action="\/setup\/sbs_/);
  assert.match(res.text, /name="email"/);
  assert.match(res.text, /name="password"/);
});

test('an unknown link answers 404 with an HTML page', async () => {
  const res = await h.get('/setup/sbs_unknown');
  expectStatus(res, 404);
  assert.match(String(res.headers['content-type']), /^text\/html/);
  assert.doesNotMatch(res.text, /<form/);
});

let spentToken = '';
let spentForm = { csrf: '', cookie: '' };

test('posting the setup form creates the first admin, signs them in on the board, and the spent link then answers 404', async () => {
  await h.pool.query('UPDATE setup_tokens SET used_at = now() WHERE used_at IS NULL');
  const link = await ensureSetupLink(identity);
  assert.ok(link);
  const token = tokenOf(link);
  spentToken = token;
  // A cross-site form (no CSRF cookie of this browser's, or a forged field) signs no one in.
  const forged = await h.post(
    `/setup/${token}`,
    form({ email: 'First@Example.test', display_name: 'F', password: PASSWORD, csrf: 'forged' }),
  );
  expectStatus(forged, 403);
  assert.doesNotMatch(String(forged.headers['set-cookie'] ?? ''), /sb_session=/);
  assert.deepEqual(await humans(), [], 'the refused post spent nothing');
  spentForm = await openForm(token);
  const res = await postSetup(token, spentForm, { email: 'First@Example.test', display_name: 'F', password: PASSWORD });
  expectStatus(res, 303);
  assert.equal(res.headers.location, '/');
  const cookie = String(res.headers['set-cookie']);
  const session = /sb_session=(sbx_[^;]+)/.exec(cookie)?.[1];
  assert.ok(session, cookie);
  const board = await h.app.inject({ method: 'GET', url: '/', cookies: { sb_session: session } });
  assert.equal(board.statusCode, 200);
  assert.match(board.body, /first@example\.test/);
  assert.deepEqual(await humans(), [{ email: 'first@example.test', role: 'admin' }]);
  const admin = await login(h, 'first@example.test');
  assert.equal(admin.human.role, 'admin');
  assert.equal(admin.human.display_name, 'F');

  const page = await h.get(`/setup/${token}`);
  expectStatus(page, 404);
  assert.doesNotMatch(page.text, /<form method/);
});

test('a second use of the spent setup link fails, as a form and through the API, and adds no human', async () => {
  assert.ok(spentToken);
  const before = await tableCounts(h.pool);
  // The same browser, its form still open, posts again.
  const page = await postSetup(spentToken, spentForm, { email: 'second@example.test', password: PASSWORD });
  expectStatus(page, 404);
  assert.match(page.text, /unknown, used or expired/);
  const api = await h.post('/api/v1/setup', {
    body: { token: spentToken, email: 'second@example.test', password: PASSWORD },
  });
  expectError(api, 401, 'unauthenticated', 'token');
  assert.deepEqual(await tableCounts(h.pool), before);
  assert.deepEqual(await humans(), [{ email: 'first@example.test', role: 'admin' }]);
});

test('once an admin exists, no setup link is minted', async () => {
  assert.equal(await ensureSetupLink(identity), null);
});

test('the setup form spends a link once: the second post answers 404 and adds no human', async () => {
  const admin = await login(h, 'first@example.test');
  const created = await h.post('/api/v1/humans', { token: admin.token, body: { email: 'invitee@example.test' } });
  expectStatus(created, 201);
  const token = tokenOf(created.body.invite_url);
  expectStatus(await h.get(`/setup/${token}`), 200);
  const cookieless = await h.post(`/setup/${token}`, form({ password: 'invitee password' }));
  expectStatus(cookieless, 403, 'a post without the page’s CSRF cookie is refused');
  const opened = await openForm(token);
  const first = await postSetup(token, opened, { password: 'invitee password' });
  expectStatus(first, 303);
  const before = await tableCounts(h.pool);
  const second = await postSetup(token, opened, { email: 'intruder@example.test', password: 'intruder password' });
  expectStatus(second, 404);
  assert.match(second.text, /unknown, used or expired/);
  assert.deepEqual(await tableCounts(h.pool), before);
  await login(h, 'invitee@example.test', 'invitee password');
  const intruder = await h.post('/api/v1/auth/login', {
    body: { email: 'invitee@example.test', password: 'intruder password' },
  });
  expectError(intruder, 401, 'unauthenticated');
});

test('a setup link minted before the first admin existed cannot make a second admin', async () => {
  // Two starts with no humans each log a link; the first admin is made with one of them.
  await h.pool.query('DELETE FROM humans');
  await h.pool.query('DELETE FROM setup_tokens');
  const first = await ensureSetupLink(identity);
  const second = await ensureSetupLink(identity);
  assert.ok(first && second);
  const made = await h.post('/api/v1/setup', {
    body: { token: tokenOf(first), email: 'owner@example.test', password: PASSWORD },
  });
  expectStatus(made, 201);
  const extra = await h.post('/api/v1/setup', {
    body: { token: tokenOf(second), email: 'late@example.test', password: PASSWORD },
  });
  assert.notEqual(extra.status, 201, `a second first-admin was created: ${extra.text}`);
  assert.deepEqual(await humans(), [{ email: 'owner@example.test', role: 'admin' }]);
});
