// Pins the people page in a real browser (docs/design/people.md): an admin disables a
// member (whose board session ends at once) and enables them again, changes a role, issues
// a reset link that works once and ends signed in, revokes a token, invites with a
// copyable link; a member sees only themself, changes their own password and is refused
// every admin action; the last active admin's refusal shows in their row.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { signIn } from '../../src/identity/board-sessions.js';
import { login } from '../../src/identity/login.js';
import { testDatabase } from '../helpers/db.js';
import { PASSWORD, boardRequest, human, launchBrowser, screenshot, signedInPage, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_people');
// Every test signs in through the form, all from 127.0.0.1: a burst the sign-in limit
// (10, then 12 a minute) would refuse part way through the file.
const { url } = await startBoard(db, 250, { SWITCHBOARD_SIGNIN_BURST: '1000' });
const browser: Browser = await launchBrowser();
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };

const row = (page: Page, email: string) => page.locator('tr[data-human]').filter({ hasText: email });

async function adminPage() {
  const admin = await human(db, 'admin');
  const signed = await signedInPage(browser, url, admin);
  signed.page.on('dialog', (dialog) => void dialog.accept());
  await signed.page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'People' }).click();
  await signed.page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
  return { admin, ...signed };
}

test('an admin disables a member, whose board session ends at once, then enables them to sign in again', async () => {
  const { page, errors } = await adminPage();
  const member = await human(db);
  const theirs = await signedInPage(browser, url, member);
  await page.reload();
  await screenshot(page, 'people');

  await row(page, member.email)
    .getByRole('button', { name: `Disable ${member.email}` })
    .click();
  await page.locator(`tr[data-human="${member.id}"][data-state="disabled"]`).waitFor();
  await theirs.page.goto('/');
  assert.equal(new URL(theirs.page.url()).pathname, '/login', 'the disabled member is signed out');

  await row(page, member.email)
    .getByRole('button', { name: `Enable ${member.email}` })
    .click();
  await page.locator(`tr[data-human="${member.id}"][data-state="active"]`).waitFor();
  await signedInPage(browser, url, member);
  assert.deepEqual(errors, []);
});

test('an admin changes a member’s role to admin and back', async () => {
  const { page } = await adminPage();
  const member = await human(db);
  await page.reload();
  const r = row(page, member.email);
  await r.getByRole('combobox', { name: `Role of ${member.email}` }).selectOption('admin');
  await r.getByRole('button', { name: `Change role ${member.email}` }).click();
  await page.locator(`tr[data-human="${member.id}"][data-role="admin"]`).waitFor();
  await row(page, member.email)
    .getByRole('combobox', { name: `Role of ${member.email}` })
    .selectOption('member');
  await row(page, member.email)
    .getByRole('button', { name: `Change role ${member.email}` })
    .click();
  await page.locator(`tr[data-human="${member.id}"][data-role="member"]`).waitFor();
  const stored = await db.pool.query<{ role: string }>('SELECT role FROM humans WHERE id = $1', [member.id]);
  assert.equal(stored.rows[0]?.role, 'member');
});

test('a reset link is shown once, sets a new password once and ends signed in on the board', async () => {
  const { page, context } = await adminPage();
  const member = await human(db);
  await page.reload();
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await row(page, member.email)
    .getByRole('button', { name: `Reset link ${member.email}` })
    .click();
  await page.getByRole('heading', { name: 'Reset link', level: 1 }).waitFor();
  const link = ((await page.locator('#one-time-link').textContent()) ?? '').trim();
  assert.match(link, /\/setup\/sbs_/);
  const copy = page.locator('button[data-copy="#one-time-link"]');
  await copy.click();
  await page.locator('button[data-copy="#one-time-link"][data-copied="true"]').waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), link);

  const path = new URL(link).pathname;
  const fresh = await browser.newContext({ baseURL: url });
  const theirs = await fresh.newPage();
  await theirs.goto(path);
  await theirs.getByLabel('Password (at least 8 characters)').fill('a brand new password');
  await theirs.getByRole('button', { name: 'Create account' }).click();
  await theirs.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  assert.equal(new URL(theirs.url()).pathname, '/');
  assert.match((await theirs.locator('.who').textContent()) ?? '', new RegExp(member.email));
  await theirs.goto(path);
  await theirs.getByRole('heading', { name: 'Link not valid' }).waitFor();
  await fresh.close();
  await signIn(deps, member.email, 'a brand new password');
});

test('an admin lists a member’s tokens and revokes one', async () => {
  const { page } = await adminPage();
  const member = await human(db);
  const issued = await login(
    { ...deps, tokenTtlSeconds: 3600 },
    { email: member.email, password: PASSWORD, token_name: 'laptop' },
  );
  await page.reload();
  assert.equal(await row(page, member.email).locator('[data-field="tokens"]').textContent(), '1');
  await row(page, member.email)
    .getByRole('link', { name: `Tokens of ${member.email}` })
    .click();
  await page.getByRole('heading', { name: `Tokens of ${member.email}`, level: 1 }).waitFor();
  await page.getByRole('button', { name: 'Revoke laptop' }).click();
  await page.locator(`tr[data-token="${issued.token_id}"][data-state="revoked"]`).waitFor();
  const stored = await db.pool.query('SELECT 1 FROM api_tokens WHERE id = $1 AND revoked_at IS NOT NULL', [
    issued.token_id,
  ]);
  assert.equal(stored.rowCount, 1);
  // The page's history shows the revoke, by whom, its detail as words rather than JSON.
  await page.getByRole('heading', { name: 'History', level: 2 }).waitFor();
  const entry = page.locator('tr[data-audit="token_revoke"]').first();
  const text = (await entry.textContent()) ?? '';
  assert.match(text, new RegExp(`token_id: ${issued.token_id}`));
  assert.match(text, /name: laptop/);
  assert.doesNotMatch(text, /[{}"]/);
});

test('an admin invites someone and copies the one-time link; a mistake shows next to the email field', async () => {
  const { page } = await adminPage();
  await page.getByLabel('Email').fill('not-an-email');
  // The browser's own check would stop the form: post it as a browser without it would.
  await page.locator('form[action="/people"]').evaluate((f) => f.setAttribute('novalidate', ''));
  await page.getByRole('button', { name: 'Invite' }).click();
  await page.locator('[data-error-for="email"]').waitFor();
  assert.equal(await page.getByLabel('Email').getAttribute('aria-invalid'), 'true');
  const email = `invited-${Date.now()}@example.test`;
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Invite' }).click();
  await page.getByRole('heading', { name: 'Invite link', level: 1 }).waitFor();
  assert.match((await page.locator('#one-time-link').textContent()) ?? '', /\/setup\/sbs_/);
  await page.getByRole('link', { name: 'Back to people' }).click();
  await row(page, email).waitFor();
});

test('a member sees only themself, changes their own password and stays signed in, and is refused admin actions', async () => {
  const member = await human(db);
  const other = await human(db);
  const { page } = await signedInPage(browser, url, member);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'People' }).click();
  await page.getByRole('heading', { name: 'People', level: 1 }).waitFor();
  assert.equal(await page.locator('tr[data-human]').count(), 1);
  await row(page, member.email).waitFor();
  assert.equal(await page.getByRole('button', { name: /^Disable/ }).count(), 0);

  await page.getByLabel('Current password').fill('wrong password');
  await page.getByLabel('New password (at least 8 characters)').fill('another good password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.locator('[data-error-for="current"]').waitFor();
  await page.getByLabel('Current password').fill(PASSWORD);
  await page.getByLabel('New password (at least 8 characters)').fill('another good password');
  await page.getByRole('button', { name: 'Change password' }).click();
  await page.getByText('Password changed.').waitFor();
  await page.goto('/');
  await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  await signIn(deps, member.email, 'another good password');

  const session = await signIn(deps, other.email, PASSWORD);
  const cookie = `sb_session=${session.cookie}`;
  const csrf = session.csrf;
  for (const [path, form] of [
    [`/people/${member.id}/state`, { state: 'disabled' }],
    [`/people/${member.id}/role`, { role: 'admin' }],
    [`/people/${member.id}/reset`, {}],
    ['/people', { email: 'sneaky@example.test' }],
    [`/people/${member.id}/tokens/tk_x/revoke`, {}],
  ] as const) {
    const res = await boardRequest(url, 'POST', path, cookie, { ...form, csrf });
    assert.equal(res.status, 403, path);
  }
  assert.equal((await boardRequest(url, 'GET', `/people/${member.id}/tokens`, cookie)).status, 403);
  const people = await boardRequest(url, 'GET', '/people', cookie);
  assert.doesNotMatch(people.text, new RegExp(member.email));
  const stored = await db.pool.query('SELECT state, role FROM humans WHERE id = $1', [member.id]);
  assert.deepEqual(stored.rows[0], { state: 'active', role: 'member' });
});

test('the last active admin cannot demote themself: the refusal shows in their row', async () => {
  const { page, admin } = await adminPage();
  await db.pool.query(`UPDATE humans SET role = 'member' WHERE role = 'admin' AND id <> $1`, [admin.id]);
  await page.reload();
  await row(page, admin.email)
    .getByRole('combobox', { name: `Role of ${admin.email}` })
    .selectOption('member');
  await row(page, admin.email)
    .getByRole('button', { name: `Change role ${admin.email}` })
    .click();
  const refusal = page.locator(`[data-error-for="${admin.id}"]`);
  await refusal.waitFor();
  assert.match((await refusal.textContent()) ?? '', /last active admin/);
  await screenshot(page, 'people-last-admin');
  const stored = await db.pool.query<{ role: string }>('SELECT role FROM humans WHERE id = $1', [admin.id]);
  assert.equal(stored.rows[0]?.role, 'admin');
});

test('the people forms refuse a missing or wrong CSRF token, and an unknown human answers 404', async () => {
  const admin = await human(db, 'admin');
  const member = await human(db);
  const session = await signIn(deps, admin.email, PASSWORD);
  const cookie = `sb_session=${session.cookie}`;
  for (const csrf of [undefined, 'wrong']) {
    for (const [path, form] of [
      [`/people/${member.id}/state`, { state: 'disabled' }],
      [`/people/${member.id}/role`, { role: 'admin' }],
      [`/people/${member.id}/reset`, {}],
      ['/people', { email: 'csrf@example.test' }],
      ['/people/me/password', { current: PASSWORD, new: 'not changed at all' }],
    ] as const) {
      const res = await boardRequest(url, 'POST', path, cookie, csrf === undefined ? form : { ...form, csrf });
      assert.equal(res.status, 403, `${path} with csrf ${String(csrf)}`);
    }
  }
  const stored = await db.pool.query('SELECT state, role FROM humans WHERE id = $1', [member.id]);
  assert.deepEqual(stored.rows[0], { state: 'active', role: 'member' });
  assert.equal((await db.pool.query(`SELECT 1 FROM humans WHERE email = 'csrf@example.test'`)).rowCount, 0);
  await signIn(deps, admin.email, PASSWORD);
  const unknown = await boardRequest(url, 'POST', '/people/hu_unknown/state', cookie, {
    state: 'disabled',
    csrf: session.csrf,
  });
  assert.equal(unknown.status, 404);
  assert.equal((await boardRequest(url, 'GET', '/people/hu_unknown/tokens', cookie)).status, 404);
});

test('without JavaScript, the people forms work as full-page posts answered with a 303 back', async () => {
  const admin = await human(db, 'admin');
  const member = await human(db);
  const { page } = await signedInPage(browser, url, admin, { javaScriptEnabled: false });
  await page.goto('/people');
  await row(page, member.email)
    .getByRole('button', { name: `Disable ${member.email}` })
    .click();
  await page.locator(`tr[data-human="${member.id}"][data-state="disabled"]`).waitFor();
  assert.equal(new URL(page.url()).pathname, '/people');
  await row(page, member.email)
    .getByRole('button', { name: `Enable ${member.email}` })
    .click();
  await page.locator(`tr[data-human="${member.id}"][data-state="active"]`).waitFor();
  await row(page, member.email)
    .getByRole('button', { name: `Reset link ${member.email}` })
    .click();
  assert.match((await page.locator('#one-time-link').textContent()) ?? '', /\/setup\/sbs_/);
  assert.equal(await page.locator('button[data-copy]').isVisible(), false, 'no dead copy button without JavaScript');
});

test('the own-password form is counted by the sign-in limit, so the board cannot guess a password faster', async () => {
  const limited = await startBoard(db, 250, { SWITCHBOARD_SIGNIN_BURST: '1', SWITCHBOARD_SIGNIN_PER_MINUTE: '1' });
  const member = await human(db);
  const session = await signIn(deps, member.email, PASSWORD);
  const guess = () =>
    boardRequest(limited.url, 'POST', '/people/me/password', `sb_session=${session.cookie}`, {
      current: 'a wrong guess',
      new: 'never set at all',
      csrf: session.csrf,
    });
  assert.equal((await guess()).status, 400);
  assert.equal((await guess()).status, 429);
  await signIn(deps, member.email, PASSWORD);
});
