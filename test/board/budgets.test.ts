// Pins budgets on the board (docs/design/admission.md, "The board"): the editor sets a
// policy audited with the signed-in human, the queue header's strip shows used of limit,
// in flight of cap, status and "resets at" in both zones, pushed live on a claim and at
// the window's rollover (time moved in SQL), deferred cards carry a reason chip, an
// unknown zone is flagged; without JavaScript the editor works as full-page forms.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser } from 'playwright-core';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { pushTodo } from '../../src/endpoints/todos.js';
import { testDatabase } from '../helpers/db.js';
import { connect, ok } from '../mcp/harness.js';
import { human, launchBrowser, liveOpen, screenshot, signedInPage, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_budgets');
const { url } = await startBoard(db);
const browser: Browser = await launchBrowser();
const deps = { db: db.pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 };

const strip = (queue: string) => `[data-queue="${queue}"] [data-slot="budget-strip"]`;

test('a budget set in the editor shows in the strip, goes deferred live on a claim and reopens at rollover', async () => {
  const who = await human(db);
  const vended = await vendEndpoint(deps, who.id, { name: 'Budgeted', queues: ['inbox'] }, new Date());
  const { endpoint } = vended;
  const { page, errors } = await signedInPage(browser, url, who);

  await page.goto(`/endpoints/${endpoint.slug}`);
  await page.getByRole('link', { name: 'Budget of inbox' }).click();
  await page.getByRole('heading', { name: `Budget of Budgeted · inbox` }).waitFor();
  await page.getByLabel('Max claims per window').fill('1');
  await page.getByLabel('Window', { exact: true }).selectOption('day');
  await page.getByLabel('Window zone').fill('Europe/Berlin');
  await page.getByLabel('Window starts at').fill('06:00');
  await page.getByRole('button', { name: 'Save budget' }).click();
  await page.locator('tr[data-audit="create"]').filter({ hasText: who.email }).waitFor();
  await screenshot(page, 'budget-editor');

  await pushTodo(deps, who.id, endpoint.slug, { queue: 'inbox', title: 'first' }, new Date());
  await pushTodo(deps, who.id, endpoint.slug, { queue: 'inbox', title: 'second' }, new Date());
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Queues' }).click();
  await liveOpen(page);
  await page
    .locator(`${strip('inbox')} [data-budget="used"]`)
    .filter({ hasText: 'used 0 of 1' })
    .waitFor();
  assert.equal(await page.locator(`${strip('inbox')} [data-budget="status"]`).textContent(), 'open');
  assert.match((await page.locator('[data-budget="resets-policy"]').textContent()) ?? '', /06:00 Europe\/Berlin/);
  const viewer = page.locator('[data-budget="resets-viewer"]');
  assert.equal(await viewer.getAttribute('data-local'), 'true', "the viewer's zone comes from the browser");
  assert.match((await viewer.getAttribute('title')) ?? '', /UTC$/);
  assert.equal(await page.locator('[data-slot="deferred-chip"][data-reason]').count(), 0);

  const agent = await connect(url, vended.credential);
  await ok(agent, 'claim_next', {});
  await page
    .locator(`${strip('inbox')} [data-budget="used"]`)
    .filter({ hasText: 'used 1 of 1' })
    .waitFor();
  assert.match((await page.locator(`${strip('inbox')} [data-budget="status"]`).textContent()) ?? '', /deferred/);
  const chip = page.locator('[data-lane="pending"] [data-slot="deferred-chip"]');
  await chip.filter({ hasText: 'window used up' }).waitFor();
  assert.equal(await chip.getAttribute('data-reason'), 'window_exhausted');
  await screenshot(page, 'queues-budget-deferred');

  // The window rolls over: the counted window is now yesterday's.
  await db.pool.query(
    `UPDATE admission_windows SET window_start = window_start - interval '1 day'
      WHERE policy_id IN (SELECT id FROM admission_policies WHERE endpoint_id = $1)`,
    [endpoint.id],
  );
  await page
    .locator(`${strip('inbox')} [data-budget="used"]`)
    .filter({ hasText: 'used 0 of 1' })
    .waitFor();
  assert.equal(await page.locator(`${strip('inbox')} [data-budget="status"]`).textContent(), 'open');
  await page.locator('[data-lane="pending"] [data-slot="deferred-chip"][data-reason]').waitFor({ state: 'detached' });

  // A zone this runtime does not know fails closed and is flagged.
  await db.pool.query(`UPDATE admission_policies SET window_tz = 'Mars/Olympus_Mons' WHERE endpoint_id = $1`, [
    endpoint.id,
  ]);
  await page.locator('[data-budget="unknown-zone"]').filter({ hasText: 'Mars/Olympus_Mons' }).waitFor();
  assert.equal(await chip.getAttribute('data-reason'), 'admission_unavailable');
  assert.deepEqual(errors, []);
});

test('without JavaScript, the budget editor names a bad field, keeps the values, saves and removes', async () => {
  const who = await human(db);
  const { endpoint } = await vendEndpoint(deps, who.id, { name: 'Plain budget', queues: ['work'] }, new Date());
  const { page } = await signedInPage(browser, url, who, { javaScriptEnabled: false });
  await page.goto(`/endpoints/${endpoint.slug}/budgets/work`);
  await page.getByLabel('Max in flight').fill('2');
  await page.getByLabel('Max claims per window').fill('5');
  await page.getByLabel('Window', { exact: true }).selectOption('hour');
  await page.getByLabel('Window zone').fill('Not/AZone');
  await page.getByRole('button', { name: 'Save budget' }).click();
  await page.getByRole('alert').filter({ hasText: 'window.tz' }).waitFor();
  assert.equal(await page.getByLabel('Max in flight').inputValue(), '2');
  assert.equal(await page.getByLabel('Window zone').inputValue(), 'Not/AZone');

  await page.getByLabel('Window zone').fill('UTC');
  await page.getByRole('button', { name: 'Save budget' }).click();
  await page.locator('tr[data-audit="create"]').waitFor();
  await page.goto('/');
  assert.equal(await page.locator(`${strip('work')} [data-budget="in-flight"]`).textContent(), 'in flight 0 of 2');
  assert.equal(await page.locator(`${strip('work')} [data-budget="used"]`).textContent(), 'used 0 of 5');
  assert.match((await page.locator('[data-budget="resets-viewer"]').textContent()) ?? '', /UTC$/);

  await page.locator(strip('work')).getByRole('link', { name: 'Budget' }).click();
  await page.getByRole('button', { name: 'Remove budget' }).click();
  await page.getByText('No budget: every claim is admitted.').waitFor();
  assert.equal(await page.locator('tr[data-audit]').count(), 2, 'create and delete are both audited');

  const other = await human(db);
  const theirs = await vendEndpoint(deps, other.id, { name: 'Theirs', queues: ['inbox'] }, new Date());
  const foreign = await page.goto(`/endpoints/${theirs.endpoint.slug}/budgets/inbox`);
  assert.equal(foreign?.status(), 404);
  const ungranted = await page.goto(`/endpoints/${endpoint.slug}/budgets/nope`);
  assert.equal(ungranted?.status(), 404);
});
