// Pins the board's finishing touches in a real browser: the vend reveal's copy buttons
// copy (and stay hidden without JavaScript) and its guidance names the channel flag for
// this server; an invite's setup page ends signed in on the board; the budget audit reads
// "field: old → new"; a schedule is added, paused and resumed from the endpoint card's
// link; a form's error sits under the field it names; no page repeats a heading.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { createHuman } from '../../src/identity/humans.js';
import { testDatabase } from '../helpers/db.js';
import { PASSWORD, boardRequest, human, launchBrowser, screenshot, signedInPage, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_polish');
const { url } = await startBoard(db);
const browser: Browser = await launchBrowser();
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };

async function vendThroughWizard(page: Page, name: string): Promise<void> {
  await page.goto('/endpoints/new');
  await page.getByLabel('Name').fill(name);
  for (let step = 2; step <= 5; step += 1) {
    await page.getByRole('button', { name: 'Next' }).click();
    // Each step swaps the page; the next click must find the new step's button.
    await page.getByText(`Step ${step} of 5`).waitFor();
  }
  await page.getByRole('button', { name: 'Vend endpoint' }).click();
  await page.getByRole('heading', { name: 'Endpoint vended', level: 1 }).waitFor();
}

/** No h2 repeats the page's h1, and no heading text appears twice at the same level. */
async function headingsDistinct(page: Page): Promise<void> {
  const headings = await page
    .locator('main h1, main h2')
    .evaluateAll((els) => els.map((e) => `${e.tagName}:${(e.textContent ?? '').replace(/\s+/g, ' ').trim()}`));
  const h1 = headings.find((h) => h.startsWith('H1:'))?.slice(3);
  assert.equal(new Set(headings).size, headings.length, `a repeated heading: ${headings.join(' | ')}`);
  assert.ok(!headings.includes(`H2:${h1}`), `the h1 again as an h2: ${headings.join(' | ')}`);
}

test('the vend reveal copies the credential and snippets, and names the channel flag for this server', async () => {
  const who = await human(db);
  const { page, context, errors } = await signedInPage(browser, url, who);
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await vendThroughWizard(page, 'Copyable');
  const slug = await page.locator('#guidance').getAttribute('data-server-name');
  assert.ok(slug);
  assert.equal(
    (await page.locator('#channel-flag').textContent())?.trim(),
    `--dangerously-load-development-channels server:${slug}`,
  );
  assert.match((await page.locator('#guidance').textContent()) ?? '', new RegExp(`MCP server ${slug}`));
  for (const id of ['credential', 'mcp-json', 'claude-mcp-add', 'claude-code-command', 'bridge-command']) {
    const button = page.locator(`button[data-copy="#${id}"]`);
    assert.equal(await button.isVisible(), true, id);
    await button.click();
    await page.locator(`button[data-copy="#${id}"][data-copied="true"]`).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied, await page.locator(`#${id}`).textContent(), id);
  }
  assert.match(await page.evaluate(() => navigator.clipboard.readText()), /switchboard bridge/);
  await headingsDistinct(page);
  await screenshot(page, 'vend-reveal-copy');
  assert.deepEqual(errors, []);
});

test('without JavaScript the copy buttons stay hidden and the text is still there to select', async () => {
  const who = await human(db);
  const { page } = await signedInPage(browser, url, who, { javaScriptEnabled: false });
  await vendThroughWizard(page, 'Plain');
  assert.match((await page.locator('#credential').textContent()) ?? '', /^sbk_/);
  assert.equal(await page.locator('button[data-copy="#credential"]').isVisible(), false);
  assert.equal(await page.locator('button[data-copy="#credential"]').getAttribute('hidden'), '');
});

test('an invite’s setup page ends signed in on the board, and a mistake shows next to the password field', async () => {
  const email = `newcomer-${Date.now()}@example.test`;
  const { invite_url } = await createHuman(deps, { email });
  assert.ok(invite_url);
  const context = await browser.newContext({ baseURL: url });
  const page = await context.newPage();
  await page.goto(new URL(invite_url).pathname);
  await page.getByRole('heading', { name: 'Set up Switchboard', level: 1 }).waitFor();
  await page.locator('form').evaluate((f) => f.setAttribute('novalidate', ''));
  await page.getByLabel('Password (at least 8 characters)').fill('short');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.locator('[data-error-for="password"]').waitFor();
  assert.equal(await page.getByLabel('Password (at least 8 characters)').getAttribute('aria-invalid'), 'true');
  await page.getByLabel('Password (at least 8 characters)').fill('a good long password');
  await page.getByRole('button', { name: 'Create account' }).click();
  await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
  assert.equal(new URL(page.url()).pathname, '/');
  assert.equal(await page.locator('.who').textContent(), email);
  assert.equal(await page.getByText('Account ready').count(), 0);
  await context.close();
});

test('the budget audit reads "field: old → new"', async () => {
  const who = await human(db);
  const { endpoint } = await vendEndpoint(deps, who.id, { name: 'Audited', queues: ['inbox'] }, new Date());
  const { page } = await signedInPage(browser, url, who);
  await page.goto(`/endpoints/${endpoint.slug}`);
  await page.getByRole('link', { name: 'Budget of inbox' }).click();
  await page.getByLabel('Max in flight').fill('2');
  await page.getByRole('button', { name: 'Save budget' }).click();
  await page.locator('tr[data-audit="create"]').waitFor();
  await page.getByLabel('Max in flight').fill('3');
  await page.getByRole('button', { name: 'Save budget' }).click();
  const change = page.locator('tr[data-audit="update"] [data-change="max_in_flight"]');
  await change.waitFor();
  assert.equal((await change.textContent())?.trim(), 'max_in_flight: 2 → 3');
  assert.equal(await page.locator('tr[data-audit="update"] [data-change]').count(), 1, 'only what changed');
  assert.equal(
    (await page.locator('tr[data-audit="create"] [data-change="max_in_flight"]').textContent())?.trim(),
    'max_in_flight: none → 2',
  );
  assert.doesNotMatch((await page.locator('main table').last().textContent()) ?? '', /[{}]/, 'no raw JSON');
  await headingsDistinct(page);
});

test('a schedule is added, paused and resumed from the board, reached from the endpoint card', async () => {
  const who = await human(db);
  const { endpoint } = await vendEndpoint(deps, who.id, { name: 'Timed', queues: ['inbox'] }, new Date());
  const { page, errors } = await signedInPage(browser, url, who);
  await page.goto('/endpoints');
  await page.locator(`article[data-endpoint="${endpoint.slug}"]`).getByRole('link', { name: 'Schedules' }).click();
  await page.getByRole('heading', { name: 'Schedules of Timed', level: 1 }).waitFor();
  await page.getByLabel(/^Cron/).fill('not a cron');
  await page.getByLabel('Title of each todo').fill('Daily report');
  await page.getByRole('button', { name: 'Add schedule' }).click();
  await page.locator('[data-error-for="cron"]').waitFor();
  assert.equal(await page.getByLabel(/^Cron/).getAttribute('aria-invalid'), 'true');
  await page.getByLabel(/^Cron/).fill('0 9 * * 1-5');
  await page.getByRole('button', { name: 'Add schedule' }).click();
  const row = page.locator('tr[data-schedule]').filter({ hasText: 'Daily report' });
  await row.getByRole('button', { name: 'Pause Daily report' }).click();
  await row.getByText('paused').waitFor();
  await row.getByRole('button', { name: 'Resume Daily report' }).click();
  await row.getByText('active').waitFor();
  const stored = await db.pool.query<{ paused: boolean }>('SELECT paused FROM schedules WHERE title = $1', [
    'Daily report',
  ]);
  assert.deepEqual(stored.rows, [{ paused: false }]);
  await headingsDistinct(page);
  // The one failed load is the refused form's own 400 answer, shown in place by htmx.
  assert.deepEqual(
    errors.filter((e) => !e.includes('status of 400')),
    [],
  );
});

test('no page reached from the navigation repeats a heading', async () => {
  const who = await human(db, 'admin');
  const { endpoint } = await vendEndpoint(deps, who.id, { name: 'Headed', queues: ['inbox'] }, new Date());
  const { page } = await signedInPage(browser, url, who);
  for (const path of ['/', '/endpoints', `/endpoints/${endpoint.slug}`, '/people', '/settings', '/endpoints/new']) {
    await page.goto(path);
    await headingsDistinct(page);
  }
});

test('a refused push, wizard step or budget shows the message under the field it names', async () => {
  const who = await human(db);
  const { endpoint } = await vendEndpoint(deps, who.id, { name: 'Fielded', queues: ['inbox'] }, new Date());
  const session = await signIn(deps, who.email, PASSWORD);
  const cookie = `sb_session=${session.cookie}`;
  const post = (path: string, form: Record<string, string>) =>
    boardRequest(url, 'POST', path, cookie, { ...form, csrf: session.csrf });
  const under = (text: string, name: string) => {
    const control = text.search(new RegExp(`<(input|select|textarea)[^>]* name="${name}"[^>]*aria-invalid="true"`));
    const error = text.indexOf(`data-error-for="${name}"`);
    assert.ok(control >= 0 && error > control, `${name}: the error follows its control`);
  };
  const push = await post('/todos', { target: `${endpoint.slug}/inbox`, title: 'x', not_before: 'tomorrow' });
  assert.equal(push.status, 400);
  under(push.text, 'not_before');
  const wizard = await post('/endpoints/new', { step: 'name', name: '', go: 'next' });
  assert.equal(wizard.status, 400);
  under(wizard.text, 'name');
  const budget = await post(`/endpoints/${endpoint.slug}/budgets/inbox`, { max_in_flight: '-4' });
  assert.equal(budget.status, 400);
  under(budget.text, 'max_in_flight');
});
