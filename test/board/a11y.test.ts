// Pins the board's accessibility and style over every page its navigation reaches: signed
// in as an admin with seeded data (endpoints, todos in every state, a live session, a
// budget, a schedule, a webhook with a received delivery), a crawler starts at `/`, follows the nav, the links and the GET
// forms of each page it reaches (same origin, never sign-out, static files or streams),
// and runs axe-core on each page in light and dark, asserting no serious or critical violation;
// a screenshot of each kind of page is saved under test-output/board/ in both schemes.
// Also the keyboard: every shown control of those pages reachable by Tab, a skip link
// first, the todo drawer opened from a card and closed with Escape (focus back on the
// card), focus visible on what Tab reaches (docs/board.md, "Style").

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser } from 'playwright-core';
import { setPolicy } from '../../src/budgets/service.js';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { cancelTodo, pushTodo } from '../../src/endpoints/todos.js';
import { createSchedule } from '../../src/schedules/manage.js';
import { createWebhook } from '../../src/webhooks/manage.js';
import { testDatabase } from '../helpers/db.js';
import { connect, ok } from '../mcp/harness.js';
import { crawl, screenshotName, seriousViolations, shapeOf, unreachableByTab } from './a11y.js';
import { human, launchBrowser, liveOpen, screenshot, signedInPage, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_a11y');
const { url } = await startBoard(db);
const browser: Browser = await launchBrowser();
const deps = { db: db.pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 };

async function seed() {
  const admin = await human(db, 'admin');
  const at = new Date();
  const { endpoint, credential } = await vendEndpoint(
    deps,
    admin.id,
    { name: 'Builder', queues: ['inbox', 'nightly'] },
    at,
  );
  await vendEndpoint(deps, admin.id, { name: 'Reviewer', queues: ['reviews'] }, at);
  const push = async (title: string, extra: Record<string, unknown> = {}) =>
    (await pushTodo(deps, admin.id, endpoint.slug, { queue: 'inbox', title, ...extra }, at)).todo;
  const agent = await connect(url, credential, 'claude-code');
  const done = await push('Write the release notes', { payload: { version: '1.2.0' } });
  await ok(agent, 'claim', { id: done.id });
  await ok(agent, 'complete', { id: done.id, result: { words: 420 } });
  const failed = await push('Flaky integration run', { max_attempts: 3 });
  await ok(agent, 'claim', { id: failed.id });
  await ok(agent, 'fail', { id: failed.id, error: 'timeout talking to the runner' });
  const dead = await push('Import the broken archive', { max_attempts: 1 });
  await ok(agent, 'claim', { id: dead.id });
  await ok(agent, 'fail', { id: dead.id, error: 'archive is corrupt' });
  const canceled = await push('Old migration idea');
  await cancelTodo(deps, admin.id, canceled.id);
  const claimed = await push('Refactor the claim path', { priority: 10 });
  await ok(agent, 'claim', { id: claimed.id });
  await push('Triage new issues');
  await push('Nightly report', { not_before: new Date(at.getTime() + 86_400_000).toISOString() });
  await setPolicy({ db: db.pool }, { humanId: admin.id, endpointId: null }, endpoint.id, 'inbox', {
    max_in_flight: 5,
  });
  await createSchedule(
    deps,
    admin.id,
    endpoint.slug,
    { queue: 'nightly', cron: '30 2 * * *', tz: 'Europe/Berlin', title: 'Nightly backup' },
    at,
  );
  // A token webhook (no signing secret to seal) and one delivery, so Received and an event page exist.
  const hook = await createWebhook(deps, admin.id, endpoint.slug, { queue: 'inbox', name: 'ci' });
  const delivered = await fetch(url + new URL(hook.url).pathname, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-switchboard-title': 'Deploy finished' },
    body: JSON.stringify({ build: 42, status: 'green' }),
  });
  assert.equal(delivered.status, 201);
  return { admin, todo: claimed };
}

const seeded = await seed();

test('every page the navigation reaches has no serious or critical axe violation, in light and dark', async (t) => {
  const { page } = await signedInPage(browser, url, seeded.admin);
  const failures: string[] = [];
  const shot = new Set<string>();
  // Each page is checked as the crawl loaded it, in light and then in dark: the schemes
  // differ only by board.css's prefers-color-scheme query (no script reads it, nothing
  // transitions), which applies as soon as the emulated scheme changes.
  const pages = await crawl(page, url, async (path) => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const v of await seriousViolations(page)) {
        failures.push(`${path} (${scheme}) ${v.impact} ${v.id}: ${v.help}\n    ${v.nodes.join('\n    ')}`);
      }
      const name = `${screenshotName(shapeOf(path))}-${scheme}`;
      if (!shot.has(name)) {
        shot.add(name);
        await screenshot(page, name);
      }
    }
  });
  const shapes = new Set(pages.map(shapeOf));
  t.diagnostic(`checked ${pages.length} pages of ${shapes.size} kinds: ${[...shapes].join(' ')}`);
  for (const expected of [
    '/',
    '/endpoints',
    '/settings',
    '/endpoints/:id',
    '/todos/:id',
    '/sessions/:id',
    '/endpoints/:id/webhooks',
    '/endpoints/:id/events',
    '/endpoints/:id/events/:id',
    '/quarantine',
    '/grants',
    '/endpoints/:id/webhooks/:id/rules',
  ]) {
    assert.ok(shapes.has(expected), `the crawl reached ${expected} (reached: ${[...shapes].join(', ')})`);
  }
  assert.deepEqual(failures, [], failures.join('\n'));
});

test('every control on every page the navigation reaches is reachable with Tab, on the pages as served without JavaScript', async () => {
  const { page } = await signedInPage(browser, url, seeded.admin, { javaScriptEnabled: false });
  const missed: string[] = [];
  await crawl(page, url, async (path) => {
    for (const html of await unreachableByTab(page)) missed.push(`${path}: ${html}`);
  });
  assert.deepEqual(missed, [], missed.join('\n'));
});

test('the signed-out pages (sign-in, its error, the doorbell help, an unknown setup link) pass in light and dark', async () => {
  const context = await browser.newContext({ baseURL: url });
  const page = await context.newPage();
  const failures: string[] = [];
  const check = async (what: string, open: () => Promise<unknown>) => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await open();
      for (const v of await seriousViolations(page))
        failures.push(`${what} (${scheme}) ${v.id}: ${v.nodes.join('; ')}`);
      await screenshot(page, `${what}-${scheme}`);
    }
  };
  await check('login', () => page.goto('/login'));
  await check('login-error', async () => {
    await page.goto('/login');
    await page.getByLabel('Email').fill('nobody@example.test');
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
  });
  await check('docs-doorbell', () => page.goto('/docs/doorbell'));
  await check('setup-unknown', () => page.goto('/setup/no-such-token'));
  await context.close();
  assert.deepEqual(failures, [], failures.join('\n'));
});

test('each step of the vend wizard and the one-time reveal pass in light and dark', async () => {
  const { page } = await signedInPage(browser, url, seeded.admin);
  const failures: string[] = [];
  const check = async (what: string) => {
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      for (const v of await seriousViolations(page))
        failures.push(`${what} (${scheme}) ${v.id}: ${v.nodes.join('; ')}`);
      await screenshot(page, `${what}-${scheme}`);
    }
  };
  await page.goto('/endpoints/new');
  const steps = ['name', 'queues', 'verbs', 'lifetime', 'confirm'];
  for (const [i, step] of steps.entries()) {
    await page.getByText(`Step ${i + 1} of ${steps.length}: ${step}`).waitFor();
    await check(`wizard-${i + 1}-${step}`);
    if (step === 'name') await page.getByLabel('Name').fill('Checked');
    if (step !== 'confirm') await page.getByRole('button', { name: 'Next' }).click();
  }
  await page.getByRole('button', { name: 'Vend endpoint' }).click();
  await page.getByRole('heading', { name: 'Endpoint vended', level: 1 }).waitFor();
  await check('wizard-6-reveal');
  assert.deepEqual(failures, [], failures.join('\n'));
});

test('the checkers are not blind: an unnamed button, an unlabelled field and faint text fail axe; a button out of the tab order is found', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.setContent(
    '<!doctype html><html lang="en"><title>broken</title><main><h1>Broken</h1><button></button><input>' +
      '<p style="color:#ccc;background:#fff">faint</p></main></html>',
  );
  const ids = (await seriousViolations(page)).map((v) => v.id).sort();
  await page.setContent('<!doctype html><a href="#a">one</a><button tabindex="-1">two</button><input>');
  const missed = await unreachableByTab(page);
  await context.close();
  assert.deepEqual(ids, ['button-name', 'color-contrast', 'label']);
  assert.deepEqual(missed, ['<button tabindex="-1" data-tab-check="1">two</button>']);
});

test('the todo drawer has no serious or critical axe violation, and Escape closes it and gives focus back to its card', async () => {
  const { page, errors } = await signedInPage(browser, url, seeded.admin);
  await liveOpen(page);
  for (const scheme of ['light', 'dark'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.locator(`#card-${seeded.todo.id}`).click();
    const heading = page.locator('#drawer h2');
    await heading.waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'drawer-title');
    assert.deepEqual(await seriousViolations(page), []);
    await screenshot(page, `drawer-${scheme}`);
    await page.keyboard.press('Escape');
    await heading.waitFor({ state: 'detached' });
    await page.waitForFunction((id) => document.activeElement?.id === `card-${id}`, seeded.todo.id);
  }
  assert.deepEqual(errors, []);
});

test('the first Tab reaches a skip link to the content, and focus is visible on what Tab reaches', async () => {
  const { page } = await signedInPage(browser, url, seeded.admin);
  await page.keyboard.press('Tab');
  const skip = page.locator(':focus');
  assert.equal(await skip.textContent(), 'Skip to content');
  assert.ok(await skip.isVisible());
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => location.hash === '#main');
  for (let i = 0; i < 12; i++) {
    await page.keyboard.press('Tab');
    const outline = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body) return null;
      const style = getComputedStyle(el);
      return { tag: el.tagName, style: style.outlineStyle, width: parseFloat(style.outlineWidth) };
    });
    if (!outline) continue;
    assert.notEqual(outline.style, 'none', `${outline.tag} shows its focus`);
    assert.ok(outline.width >= 2, `${outline.tag}'s focus outline is at least 2px`);
  }
});
