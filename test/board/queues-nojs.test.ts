// Pins the queues page with JavaScript disabled: push through the full-page form (a
// mistake comes back with its message and the typed values), the todo detail page, and
// cancel and retry from it, each a plain post answered with a redirect.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser } from 'playwright-core';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { testDatabase } from '../helpers/db.js';
import { human, launchBrowser, screenshot, signedInPage, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_queues_nojs');
const { url } = await startBoard(db);
const browser: Browser = await launchBrowser();
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };

test('without JavaScript, push, open the detail page, cancel and retry all work as full-page forms', async () => {
  const who = await human(db);
  const { endpoint } = await vendEndpoint(deps, who.id, { name: 'Plain', queues: ['inbox', 'later'] }, new Date());
  const { page } = await signedInPage(browser, url, who, { javaScriptEnabled: false });
  assert.equal(await page.evaluate('typeof htmx'), 'undefined');

  await page.getByText('Push a todo').click();
  await page.getByLabel('Queue', { exact: true }).selectOption(`${endpoint.slug}/later`);
  await page.getByLabel('Title').fill('<script>document.title="owned"</script>');
  await page.getByLabel('Payload (JSON, optional)').fill('{not json');
  await page.getByRole('button', { name: 'Push' }).click();
  await page.getByRole('alert').filter({ hasText: 'payload: must be JSON' }).waitFor();
  assert.equal(await page.getByLabel('Title').inputValue(), '<script>document.title="owned"</script>');
  assert.equal(await page.getByLabel('Queue', { exact: true }).inputValue(), `${endpoint.slug}/later`);

  await page.getByLabel('Payload (JSON, optional)').fill('{"ok": 1}');
  await page.getByRole('button', { name: 'Push' }).click();
  await page.waitForURL(`${url}/`);
  const card = page.locator(`[data-queue="later"] [data-lane="pending"] [data-todo]`);
  assert.equal(await card.textContent().then((t) => t?.includes('<script>document.title')), true);
  assert.doesNotMatch(await page.title(), /owned/);

  await card.getByRole('link').click();
  await page.waitForURL(/\/todos\/td_/);
  await screenshot(page, 'todo-page');
  assert.match((await page.locator('main').textContent()) ?? '', /"ok": 1/);
  await page.getByRole('button', { name: 'Cancel' }).click();
  await page.waitForURL(/\/todos\/td_/);
  assert.equal(await page.locator('[data-field="state"]').textContent(), 'canceled');
  await page.getByRole('button', { name: 'Retry now' }).click();
  assert.equal(await page.locator('[data-field="state"]').textContent(), 'pending');
  await page.getByRole('link', { name: 'Back to the queues' }).click();
  assert.equal(await page.locator('[data-queue="later"] [data-lane="pending"] .count').textContent(), '1');
  assert.equal(await page.locator('[data-queue="later"] [data-lane="failed"] .count').textContent(), '0');
});
