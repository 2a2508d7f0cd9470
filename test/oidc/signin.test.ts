// Human sign-in through the organisation's OIDC provider (docs/design/oauth.md, "Human
// sign-in through OIDC"), end to end: a real provider (`oidc-provider`) on a loopback
// port, Chromium on the board's sign-in page, through the provider's login and consent
// pages and back. A first sign-in creates a member (audited), a matching verified e-mail
// links the password human, and every refusal — domain, unverified e-mail, disabled
// human, tampered state, a provider that is down — shows the sign-in page and opens no
// session. With SWITCHBOARD_PASSWORD_SIGNIN=off the password is refused on the board and
// the API while the button still works.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { getHuman } from '../../src/identity/humans.js';
import { unlinkHumanOidc, updateHuman } from '../../src/identity/lifecycle.js';
import { seriousViolations } from '../board/a11y.js';
import { human, launchBrowser, PASSWORD, screenshot, signedInPage } from '../board/harness.js';
import { testDatabase } from '../helpers/db.js';
import { freePort } from '../oauth/harness.js';
import { signInThroughProvider, startProvider, startSwitchboard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('oidc_signin');
const [port, offPort, downPort] = [await freePort(), await freePort(), await freePort()];
const provider = await startProvider([
  `http://127.0.0.1:${port}/login/oidc/callback`,
  `http://127.0.0.1:${offPort}/login/oidc/callback`,
]);
const board = await startSwitchboard(db, port, provider.issuer);
const passwordOff = await startSwitchboard(db, offPort, provider.issuer, { SWITCHBOARD_PASSWORD_SIGNIN: 'off' });
// Nothing listens at this issuer: the provider is down.
const down = await startSwitchboard(db, downPort, `http://127.0.0.1:${await freePort()}`);
const browser: Browser = await launchBrowser();

function unique(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

async function freshPage(): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  return { context, page };
}

async function humanByEmail(email: string) {
  const res = await db.pool.query<{
    id: string;
    role: string;
    oidc_issuer: string | null;
    oidc_subject: string | null;
  }>('SELECT id, role, oidc_issuer, oidc_subject FROM humans WHERE lower(email) = lower($1)', [email]);
  return res.rows[0] ?? null;
}

async function sessionsOf(humanId: string): Promise<number> {
  const res = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM board_sessions WHERE human_id = $1', [
    humanId,
  ]);
  return res.rows[0]?.n ?? 0;
}

/** The reasons the server logged for refused OIDC sign-ins of this login (its subject or e-mail). */
function reasons(server: { logs: Array<Record<string, unknown>> }, needle: string): unknown[] {
  return server.logs
    .filter((l) => l.msg === 'OIDC sign-in refused' && JSON.stringify(l.detail ?? '').includes(needle))
    .map((l) => l.reason);
}

/** The sign-in page's error line, after a refused sign-in. */
async function refusal(page: Page, url: string): Promise<string> {
  await page.waitForURL((u) => u.href.startsWith(url));
  return (await page.getByRole('alert').textContent()) ?? '';
}

test('a first sign-in of an allowed, verified person creates a member, audited, and opens a board session', async () => {
  const login = unique('alice');
  const email = `${login}@example.test`;
  provider.account(login, { email, email_verified: true, name: 'Alice Example' });
  const { context, page } = await freshPage();
  await signInThroughProvider(page, board.url, login);
  await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/');

  const made = await humanByEmail(email);
  assert.ok(made, 'the human was created');
  assert.equal(made.role, 'member');
  assert.equal(made.oidc_issuer, provider.issuer);
  assert.equal(made.oidc_subject, login);
  assert.equal((await getHuman({ db: db.pool, publicUrl: board.url }, made.id)).display_name, 'Alice Example');
  const audit = await db.pool.query<{ actor_human_id: string; detail: Record<string, unknown> }>(
    `SELECT actor_human_id, detail FROM human_audit WHERE human_id = $1 AND action = 'create'`,
    [made.id],
  );
  assert.equal(audit.rows.length, 1);
  assert.equal(audit.rows[0]?.actor_human_id, made.id);
  assert.deepEqual(audit.rows[0]?.detail, { email, role: 'member', via: 'oidc', issuer: provider.issuer });
  assert.equal(await sessionsOf(made.id), 1);
  // The flow's cookie is spent at the callback.
  assert.deepEqual(
    (await context.cookies()).filter((c) => c.name === 'sb_oidc'),
    [],
  );

  // A second sign-in finds the same human by (issuer, subject): no second row.
  const again = await freshPage();
  await signInThroughProvider(again.page, board.url, login);
  await again.page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  const count = await db.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM humans WHERE oidc_subject = $1', [
    login,
  ]);
  assert.equal(count.rows[0]?.n, 1);
  assert.equal(await sessionsOf(made.id), 2);
  await context.close();
  await again.context.close();
});

test('an existing password human with the same verified e-mail is linked, returns to `next`, and keeps the password', async () => {
  const existing = await human(db);
  const login = unique('linked');
  provider.account(login, { email: existing.email.toUpperCase(), email_verified: true });
  const { context, page } = await freshPage();
  await page.goto(`${board.url}/login?next=/people`);
  const link = page.getByRole('link', { name: 'Sign in with Example SSO' });
  await screenshot(page, 'login-oidc');
  assert.deepEqual(await seriousViolations(page), [], 'the sign-in page with its OIDC button is accessible');
  assert.equal(await link.getAttribute('href'), '/login/oidc?next=%2Fpeople');
  await link.click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${board.url}/people`);

  const row = await humanByEmail(existing.email);
  assert.equal(row?.id, existing.id, 'no new human: the existing one signed in');
  assert.equal(row?.oidc_subject, login);
  assert.equal(await sessionsOf(existing.id), 1);
  await context.close();

  // The password still signs them in.
  const byPassword = await signedInPage(browser, board.url, existing);
  assert.equal(new URL(byPassword.page.url()).pathname, '/');
  assert.equal(await sessionsOf(existing.id), 2);
});

test('a second provider account with the e-mail of a human linked to another one is refused, not linked, until an admin unlinks the first', async () => {
  const first = unique('owner');
  const email = `${first}@example.test`;
  provider.account(first, { email, email_verified: true });
  const owner = await freshPage();
  await signInThroughProvider(owner.page, board.url, first);
  await owner.page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  await owner.context.close();

  const second = unique('impostor');
  provider.account(second, { email, email_verified: true });
  const { context, page } = await freshPage();
  await signInThroughProvider(page, board.url, second);
  assert.match(await refusal(page, board.url), /not allowed to sign in here/);
  assert.deepEqual(reasons(board, second), ['linked_elsewhere']);
  assert.equal((await humanByEmail(email))?.oidc_subject, first);
  await context.close();

  // The person's account at the provider was replaced: an admin unlinks the old one, and
  // the new account's next sign-in links it (as a first sign-in of that e-mail does).
  const linked = await humanByEmail(email);
  assert.ok(linked);
  const admin = await human(db, 'admin');
  const actor = { human: await getHuman({ db: db.pool, publicUrl: board.url }, admin.id), token: null };
  const { unlinked } = await unlinkHumanOidc({ db: db.pool, publicUrl: board.url }, actor, linked.id);
  assert.equal(unlinked.subject, first);
  const retry = await freshPage();
  await signInThroughProvider(retry.page, board.url, second);
  await retry.page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  const relinked = await humanByEmail(email);
  assert.equal(relinked?.id, linked.id, 'the same human, not a new one');
  assert.equal(relinked?.oidc_subject, second);
  await retry.context.close();
});

test('an e-mail outside the allowed domains is refused and no human is created', async () => {
  const login = unique('outsider');
  const email = `${login}@elsewhere.test`;
  provider.account(login, { email, email_verified: true });
  const { context, page } = await freshPage();
  await signInThroughProvider(page, board.url, login);
  assert.match(await refusal(page, board.url), /not allowed to sign in here/);
  await screenshot(page, 'login-oidc-refused');
  assert.equal(new URL(page.url()).pathname, '/login/oidc/callback');
  assert.deepEqual(reasons(board, email), ['not_allowed']);
  assert.equal(await humanByEmail(email), null);
  // Not signed in: the board sends the browser to the sign-in page.
  await page.goto(`${board.url}/`);
  assert.equal(new URL(page.url()).pathname, '/login');
  await context.close();
});

test('an e-mail the provider has not verified is refused, saying so', async () => {
  const login = unique('unverified');
  const email = `${login}@example.test`;
  provider.account(login, { email, email_verified: false });
  const { context, page } = await freshPage();
  await signInThroughProvider(page, board.url, login);
  assert.match(await refusal(page, board.url), /has not verified your e-mail address/);
  assert.deepEqual(reasons(board, email), ['email_unverified']);
  assert.equal(await humanByEmail(email), null);
  await context.close();
});

test('email_verified sent as the string "true" counts as verified; the string "false" does not', async () => {
  const login = unique('stringly');
  const email = `${login}@example.test`;
  provider.account(login, { email, email_verified: 'true' });
  const first = await freshPage();
  await signInThroughProvider(first.page, board.url, login);
  await first.page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  assert.equal((await humanByEmail(email))?.oidc_subject, login);
  await first.context.close();

  const refused = unique('stringly-false');
  const refusedEmail = `${refused}@example.test`;
  provider.account(refused, { email: refusedEmail, email_verified: 'false' });
  const second = await freshPage();
  await signInThroughProvider(second.page, board.url, refused);
  assert.match(await refusal(second.page, board.url), /has not verified your e-mail address/);
  assert.deepEqual(reasons(board, refusedEmail), ['email_unverified']);
  assert.equal(await humanByEmail(refusedEmail), null);
  await second.context.close();
});

test('a disabled human cannot sign in through the provider either', async () => {
  const admin = await human(db, 'admin');
  const target = await human(db);
  const deps = { db: db.pool, publicUrl: board.url };
  const actor = { human: await getHuman(deps, admin.id), token: null };
  await updateHuman(deps, actor, target.id, { state: 'disabled' });
  const login = unique('disabled');
  provider.account(login, { email: target.email, email_verified: true });
  const { context, page } = await freshPage();
  await signInThroughProvider(page, board.url, login);
  assert.match(await refusal(page, board.url), /not allowed to sign in here/);
  assert.deepEqual(reasons(board, target.email), ['disabled']);
  assert.equal(await sessionsOf(target.id), 0);
  // Refused before the link: a disabled human is not linked either.
  assert.equal((await humanByEmail(target.email))?.oidc_subject, null);
  await context.close();
});

test('a callback whose state was tampered with is refused and opens no session', async () => {
  const login = unique('tamper');
  const email = `${login}@example.test`;
  provider.account(login, { email, email_verified: true });
  const { context, page } = await freshPage();
  // The provider's redirect back is a redirect hop, which page.route does not see: catch
  // the consent form's post instead, follow its redirects by hand in the browser's own
  // cookie jar, and keep the callback URL the browser would have gone to.
  let callback = '';
  const isConsent = (u: URL) => u.origin === provider.issuer && u.pathname.startsWith('/interaction/');
  await page.route(isConsent, async (route) => {
    if (route.request().method() !== 'POST' || !/prompt=consent/.test(route.request().postData() ?? '')) {
      return route.continue();
    }
    let res = await route.fetch({ maxRedirects: 0 });
    for (let hop = 0; hop < 5 && !callback; hop++) {
      const location = new URL(res.headers()['location'] ?? '', route.request().url());
      if (location.pathname === '/login/oidc/callback') callback = location.href;
      else res = await context.request.get(location.href, { maxRedirects: 0 });
    }
    return route.abort();
  });
  await page.goto(`${board.url}/login`);
  await page.getByRole('link', { name: 'Sign in with Example SSO' }).click();
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  for (let i = 0; i < 100 && callback === ''; i++) await new Promise((r) => setTimeout(r, 50));
  assert.match(callback, /[?&]code=.*[?&]state=/);
  await page.unroute(isConsent);
  const tampered = new URL(callback);
  tampered.searchParams.set('state', 'not-the-state-this-browser-started');
  const before = board.logs.length;
  const answer = await page.goto(tampered.href);
  assert.equal(answer?.status(), 401);
  assert.equal(board.logs.slice(before).find((l) => l.msg === 'OIDC sign-in refused')?.reason, 'state_mismatch');
  assert.match(await refusal(page, board.url), /did not complete/);
  assert.equal(await humanByEmail(email), null);
  // The refused callback spent the browser's flow: the untouched URL is refused too.
  const original = await page.goto(callback);
  assert.equal(original?.status(), 401);
  assert.match(await refusal(page, board.url), /did not complete/);
  assert.equal(await humanByEmail(email), null);
  await context.close();
});

test('two sign-ins started in two tabs of one browser both finish, the first started coming back first', async () => {
  const login = unique('tabs');
  const email = `${login}@example.test`;
  provider.account(login, { email, email_verified: true });
  const context = await browser.newContext();
  const tabs = [await context.newPage(), await context.newPage()];
  for (const tab of tabs) {
    await tab.goto(`${board.url}/login`);
    await tab.getByRole('link', { name: 'Sign in with Example SSO' }).click();
    await tab.locator('input[name="login"]').waitFor();
  }
  // One cookie holds both flows; the first tab's answer finds its own beside the second's.
  const cookie = (await context.cookies(board.url)).find((c) => c.name === 'sb_oidc');
  assert.equal(JSON.parse(Buffer.from(cookie?.value ?? '', 'base64url').toString('utf8')).length, 2);
  for (const tab of tabs) {
    await tab.locator('input[name="login"]').fill(login);
    await tab.locator('input[name="password"]').fill('anything');
    await tab.getByRole('button', { name: 'Sign-in' }).click();
    // The provider asks for consent once: the second tab's sign-in may come straight back.
    const consent = tab.getByRole('button', { name: 'Continue' });
    const asked = await Promise.race([
      consent.waitFor().then(
        () => true,
        () => false,
      ),
      tab
        .waitForURL((u) => u.href.startsWith(board.url))
        .then(
          () => false,
          () => false,
        ),
    ]);
    if (asked) await consent.click();
    await tab.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  }
  const made = await humanByEmail(email);
  assert.ok(made);
  assert.equal(await sessionsOf(made.id), 2, 'each tab signed in');
  assert.deepEqual(
    (await context.cookies(board.url)).filter((c) => c.name === 'sb_oidc'),
    [],
    'both flows spent',
  );
  await context.close();
});

test('a nonce other than the one the ID token carries is refused (the library checks it)', async () => {
  const login = unique('nonce');
  const email = `${login}@example.test`;
  provider.account(login, { email, email_verified: true });
  const { context, page } = await freshPage();
  await page.goto(`${board.url}/login`);
  await page.getByRole('link', { name: 'Sign in with Example SSO' }).click();
  await page.locator('input[name="login"]').waitFor();
  // At the provider: the browser's flow cookie now expects another nonce than the one sent.
  const cookie = (await context.cookies(board.url)).find((c) => c.name === 'sb_oidc');
  assert.ok(cookie, 'the flow cookie');
  assert.equal(cookie.httpOnly, true);
  assert.equal(cookie.sameSite, 'Lax');
  const [flow] = JSON.parse(Buffer.from(cookie.value, 'base64url').toString('utf8')) as Record<string, unknown>[];
  await context.addCookies([
    { ...cookie, value: Buffer.from(JSON.stringify([{ ...flow, nonce: 'another-nonce' }])).toString('base64url') },
  ]);
  const before = board.logs.length;
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('anything');
  await page.getByRole('button', { name: 'Sign-in' }).click();
  await page.getByRole('button', { name: 'Continue' }).click();
  assert.match(await refusal(page, board.url), /did not complete/);
  assert.equal(board.logs.slice(before).find((l) => l.msg === 'OIDC sign-in refused')?.reason, 'nonce_mismatch');
  assert.equal(await humanByEmail(email), null);
  await context.close();
});

test('with SWITCHBOARD_PASSWORD_SIGNIN=off the password is refused (board and API) and the button still signs in', async () => {
  const who = await human(db);
  const { context, page } = await freshPage();
  await page.goto(`${passwordOff.url}/login`);
  assert.equal(await page.getByLabel('Password').count(), 0, 'no password form');
  await page.getByRole('link', { name: 'Sign in with Example SSO' }).waitFor();
  await screenshot(page, 'login-oidc-password-off');

  // The form, posted anyway (as a saved page or a script would).
  const form = await fetch(`${passwordOff.url}/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ email: who.email, password: PASSWORD, csrf: 'x' }).toString(),
    redirect: 'manual',
  });
  assert.equal(form.status, 403);
  assert.match(await form.text(), /Password sign-in is turned off here; use the “Sign in with Example SSO” button/);
  const api = await fetch(`${passwordOff.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: who.email, password: PASSWORD }),
  });
  assert.equal(api.status, 409);
  const body = (await api.json()) as { error: { code: string; message: string } };
  assert.equal(body.error.code, 'failed_precondition');
  assert.match(body.error.message, /password sign-in is turned off.*Sign in with/);
  assert.equal(await sessionsOf(who.id), 0);

  const login = unique('nopassword');
  provider.account(login, { email: who.email, email_verified: true });
  await signInThroughProvider(page, passwordOff.url, login);
  await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  assert.equal(await sessionsOf(who.id), 1);
  await context.close();
});

test('a provider that is down gives the sign-in page saying so, not an error page', async () => {
  const res = await fetch(`${down.url}/login/oidc`, { redirect: 'manual' });
  assert.equal(res.status, 503);
  const text = await res.text();
  assert.match(text, /Example SSO cannot be reached right now/);
  assert.match(text, /Sign in with Example SSO/);
  // The password form is still there (password sign-in is on by default).
  assert.match(text, /name="password"/);
});
