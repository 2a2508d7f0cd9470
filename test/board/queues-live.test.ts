// Pins the queues page in a real browser: lanes with counts, a pushed todo appearing live
// on another page, a claim and a completion over MCP moving the card live, retry and
// cancel from the drawer, keyboard reachability and labelled controls.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { pushTodo } from '../../src/endpoints/todos.js';
import { connect, ok } from '../mcp/harness.js';
import { testDatabase } from '../helpers/db.js';
import { human, launchBrowser, liveOpen, screenshot, signedInPage, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_queues_live');
const { url } = await startBoard(db);
const browser: Browser = await launchBrowser();

const deps = () => ({ db: db.pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 });

async function setup(queues = ['inbox']) {
  const who = await human(db);
  const vended = await vendEndpoint(deps(), who.id, { name: 'Builder', queues }, new Date());
  return { who, slug: vended.endpoint.slug, credential: vended.credential };
}

const lane = (page: Page, slug: string, queue: string, name: string) =>
  page.locator(`[data-endpoint="${slug}"] [data-queue="${queue}"] [data-lane="${name}"]`);
const cardIn = (page: Page, slug: string, queue: string, name: string, title: string) =>
  lane(page, slug, queue, name).locator('[data-todo]').filter({ hasText: title });

test('signing in shows every queue of the endpoint with pending, claimed, done and failed lanes and their counts', async () => {
  const { who, slug } = await setup(['inbox', 'builds']);
  for (const title of ['first', 'second']) {
    await pushTodo(deps(), who.id, slug, { queue: 'builds', title }, new Date());
  }
  const { page } = await signedInPage(browser, url, who);
  for (const queue of ['inbox', 'builds']) {
    for (const name of ['pending', 'claimed', 'done', 'failed']) {
      await lane(page, slug, queue, name).waitFor();
    }
  }
  assert.equal(await lane(page, slug, 'builds', 'pending').locator('.count').textContent(), '2');
  assert.equal(await lane(page, slug, 'inbox', 'pending').locator('.count').textContent(), '0');
  const card = cardIn(page, slug, 'builds', 'pending', 'first');
  assert.match((await card.textContent()) ?? '', /age <1 min · attempt 0\/5/);
  await screenshot(page, 'queues');
});

test('a todo pushed through the form appears live on another open page, without a reload', async () => {
  const { who, slug } = await setup();
  const { page: watcher, errors } = await signedInPage(browser, url, who);
  await liveOpen(watcher);
  await watcher.evaluate(() => ((window as unknown as { marker: number }).marker = 42));

  const { page: pusher } = await signedInPage(browser, url, who);
  await pusher.getByText('Push a todo').click();
  await pusher.getByLabel('Title').fill('Build the release');
  await pusher.getByLabel('Body').fill('tag v1.2');
  await pusher.getByLabel('Payload (JSON, optional)').fill('{"tag": "v1.2"}');
  await pusher.getByRole('button', { name: 'Push' }).click();
  await cardIn(pusher, slug, 'inbox', 'pending', 'Build the release').waitFor();

  await cardIn(watcher, slug, 'inbox', 'pending', 'Build the release').waitFor({ timeout: 5000 });
  assert.equal(await watcher.evaluate(() => (window as unknown as { marker?: number }).marker), 42);
  assert.equal(await lane(watcher, slug, 'inbox', 'pending').locator('.count').textContent(), '1');
  assert.deepEqual(errors, [], 'no script error and no Content-Security-Policy refusal');
});

test('a claim over MCP moves the card to claimed with its lease, and complete moves it to done, live', async () => {
  const { who, slug, credential } = await setup();
  await pushTodo(deps(), who.id, slug, { queue: 'inbox', title: 'Claim me' }, new Date());
  const { page } = await signedInPage(browser, url, who);
  await cardIn(page, slug, 'inbox', 'pending', 'Claim me').waitFor();
  await liveOpen(page);

  const agent = await connect(url, credential, 'board-agent');
  const claimed = await ok(agent, 'claim_next', {});
  const moved = cardIn(page, slug, 'inbox', 'claimed', 'Claim me');
  await moved.waitFor({ timeout: 5000 });
  assert.match((await moved.textContent()) ?? '', /attempt 1\/5 · lease \d+ min left/);
  assert.equal(await cardIn(page, slug, 'inbox', 'pending', 'Claim me').count(), 0);

  await ok(agent, 'complete', { id: claimed.todo.id, result: { ok: true } });
  await cardIn(page, slug, 'inbox', 'done', 'Claim me').waitFor({ timeout: 5000 });
  assert.equal(await lane(page, slug, 'inbox', 'claimed').locator('.count').textContent(), '0');
});

test('the drawer shows payload, result and attempts, and cancel then retry move the card', async () => {
  const { who, slug } = await setup();
  await pushTodo(deps(), who.id, slug, { queue: 'inbox', title: 'Drawer todo', payload: { n: 7 } }, new Date());
  const { page, errors } = await signedInPage(browser, url, who);
  await cardIn(page, slug, 'inbox', 'pending', 'Drawer todo').getByRole('link').click();
  const drawer = page.locator('#drawer');
  await drawer.getByRole('heading', { name: 'Drawer todo' }).waitFor();
  assert.match((await drawer.textContent()) ?? '', /"n": 7/);
  assert.match((await drawer.textContent()) ?? '', /No attempts yet/);
  await screenshot(page, 'todo-drawer');

  await drawer.getByRole('button', { name: 'Cancel' }).click();
  const canceled = cardIn(page, slug, 'inbox', 'failed', 'Drawer todo');
  await canceled.waitFor();
  assert.match((await canceled.textContent()) ?? '', /canceled/);

  await canceled.getByRole('link').click();
  await drawer.getByRole('button', { name: 'Retry now' }).click();
  await cardIn(page, slug, 'inbox', 'pending', 'Drawer todo').waitFor();
  assert.deepEqual(errors, [], 'no script error and no Content-Security-Policy refusal');
});

test('the main controls are reachable with the Tab key, and Enter on a card opens its drawer', async () => {
  const { who, slug } = await setup();
  await pushTodo(deps(), who.id, slug, { queue: 'inbox', title: 'Keyboard todo' }, new Date());
  const { page } = await signedInPage(browser, url, who);
  const reached: string[] = [];
  for (let i = 0; i < 25; i++) {
    await page.keyboard.press('Tab');
    reached.push(await page.evaluate(() => (document.activeElement?.textContent ?? '').trim().slice(0, 40)));
    if (reached.at(-1) === 'Keyboard todo') break;
  }
  for (const name of ['Skip to content', 'Queues', 'Endpoints', 'Sign out', 'Push a todo', 'Keyboard todo']) {
    assert.ok(reached.includes(name), `Tab never reached "${name}": ${JSON.stringify(reached)}`);
  }
  await page.keyboard.press('Enter');
  await page.locator('#drawer').getByRole('heading', { name: 'Keyboard todo' }).waitFor();
  // Focus moves to the drawer's heading once htmx has settled the swap.
  await page.waitForFunction(() => document.activeElement?.id === 'drawer-title', null, { timeout: 2000 });
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#drawer').innerHTML(), '');
});

test('on a phone-sized screen in dark mode the queues page fits the width and uses the dark palette', async () => {
  const { who, slug } = await setup(['inbox', 'builds']);
  await pushTodo(deps(), who.id, slug, { queue: 'inbox', title: 'A rather long title '.repeat(8) }, new Date());
  const { page } = await signedInPage(browser, url, who, {
    viewport: { width: 360, height: 740 },
    colorScheme: 'dark',
  });
  await cardIn(page, slug, 'inbox', 'pending', 'A rather long title').waitFor();
  const fits = await page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
  assert.equal(fits, true, 'no sideways scrolling on a phone');
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(background, 'rgb(13, 17, 23)');
  await screenshot(page, 'queues-phone-dark');
});

test('a todo on its last attempt (max_attempts 1) moves live when claimed and when it fails into the dead letter', async () => {
  const { who, slug, credential } = await setup();
  await pushTodo(deps(), who.id, slug, { queue: 'inbox', title: 'Only once', max_attempts: 1 }, new Date());
  const { page } = await signedInPage(browser, url, who);
  await cardIn(page, slug, 'inbox', 'pending', 'Only once').waitFor();
  await liveOpen(page);
  const agent = await connect(url, credential, 'last-attempt');
  const claimed = await ok(agent, 'claim_next', {});
  await cardIn(page, slug, 'inbox', 'claimed', 'Only once').waitFor({ timeout: 5000 });
  await ok(agent, 'fail', { id: claimed.todo.id, error: 'no luck' });
  const dead = cardIn(page, slug, 'inbox', 'failed', 'Only once');
  await dead.waitFor({ timeout: 5000 });
  assert.match((await dead.textContent()) ?? '', /attempt 1\/1/);
});
