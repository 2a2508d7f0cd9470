// Pins the queue charts in a real browser: each queue on the queues page carries its last
// hour's depth and throughput as inline SVG with the oldest waiting age; after work is
// created and completed and the rollup runs (the fold and the minute sample, driven here),
// the open page's chart changes live; the queue page shows the last hour and the last day;
// another human's queue answers 404; neither page has a serious axe-core violation.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { pushTodo } from '../../src/endpoints/todos.js';
import { foldTodoCounts } from '../../src/store/todo-counts.js';
import { queueRollupSweep } from '../../src/sweeps/rollups.js';
import { claimNext, complete } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { human, launchBrowser, liveOpen, screenshot, signedInPage, startBoard } from './harness.js';

const db = await testDatabase('board_charts');
const { url } = await startBoard(db);
const browser: Browser = await launchBrowser();

const deps = () => ({ db: db.pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 });

async function setup() {
  const who = await human(db);
  const vended = await vendEndpoint(deps(), who.id, { name: 'Charted', queues: ['inbox'] }, new Date());
  return { who, endpoint: vended.endpoint };
}

/** One roll-up: the minute sample, then the fold (which adds the throughput). */
/**
 * Samples the current minute, first waiting out a minute's last 20 s: the charts read
 * "now" from the current minute's sample, and a minute that turned between a roll-up and
 * the page's read showed "depth now 0" in CI. Each roll-up here is read within seconds.
 */
async function rollUp(): Promise<void> {
  const second = new Date().getUTCSeconds();
  if (second >= 40) await new Promise((r) => setTimeout(r, (61 - second) * 1000));
  await queueRollupSweep(db.pool).run();
  await foldTodoCounts(db.pool);
}

const AXE = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** axe-core's serious and critical violations on the page, as "rule: target" lines. */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: Array<{ target: string[] }> }> }>;
        };
      }
    ).axe;
    const { violations } = await axe.run();
    return violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .flatMap((v) => v.nodes.map((n) => `${v.id}: ${n.target.join(' ')}`));
  });
}

const charts = (page: Page, slug: string) => page.locator(`[data-endpoint="${slug}"] [data-queue="inbox"] .charts`);

test('each queue shows its last hour as SVG charts with a label, and they change live after work is created, completed and rolled up', async () => {
  const { who, endpoint } = await setup();
  await pushTodo(deps(), who.id, endpoint.slug, { queue: 'inbox', title: 'first' }, new Date());
  await rollUp();

  const { page, errors } = await signedInPage(browser, url, who);
  await liveOpen(page);
  const strip = charts(page, endpoint.slug);
  const throughput = strip.locator('.chart-throughput');
  assert.equal(await throughput.getAttribute('data-created'), '1');
  assert.equal(await throughput.getAttribute('data-completed'), '0');
  const depthSvg = strip.locator('.chart-depth svg');
  assert.equal(await depthSvg.getAttribute('role'), 'img');
  assert.match(
    (await depthSvg.getAttribute('aria-label')) ?? '',
    /^inbox: depth over the last hour: depth now 1, peak 1/,
  );
  assert.match((await strip.locator('[data-field="oldest-waiting"]').textContent()) ?? '', /oldest waiting <1 min/);
  const before = await strip.locator('.chart-throughput polyline[data-series="completed"]').getAttribute('points');

  for (const title of ['second', 'third']) {
    await pushTodo(deps(), who.id, endpoint.slug, { queue: 'inbox', title }, new Date());
  }
  const agent = { endpointId: endpoint.id, sessionId: 's-charts', queues: ['inbox'], defaultLeaseSeconds: 300 };
  for (let i = 0; i < 2; i++) {
    const claimed = await claimNext(deps(), agent, {});
    assert.ok('todo' in claimed);
    await complete(deps(), agent, { id: claimed.todo.id });
  }
  await rollUp();

  await page.waitForFunction(
    (slug) =>
      document
        .querySelector(`[data-endpoint="${slug}"] [data-queue="inbox"] .chart-throughput`)
        ?.getAttribute('data-completed') === '2',
    endpoint.slug,
  );
  assert.equal(await throughput.getAttribute('data-created'), '3');
  const after = await strip.locator('.chart-throughput polyline[data-series="completed"]').getAttribute('points');
  assert.notEqual(after, before, 'the completed line moved');
  assert.match(
    (await strip.locator('.chart-depth polyline[data-series="depth"]').getAttribute('data-values')) ?? '',
    /,1$/,
    'the depth of this minute is the one todo left',
  );
  await screenshot(page, 'queue-charts');
  assert.deepEqual(await seriousViolations(page), [], 'no serious or critical axe violations');
  assert.deepEqual(errors, []);
});

test('the queue page shows the last hour and the last day with the oldest waiting age; another human gets 404', async () => {
  const { who, endpoint } = await setup();
  await pushTodo(deps(), who.id, endpoint.slug, { queue: 'inbox', title: 'waiting' }, new Date());
  await rollUp();
  const { page } = await signedInPage(browser, url, who);
  await charts(page, endpoint.slug).getByRole('link', { name: 'history of inbox' }).click();
  await page.getByRole('heading', { name: 'Last hour' }).waitFor();
  await page.getByRole('heading', { name: 'Last day' }).waitFor();
  assert.equal(await page.locator('section[aria-label="Last day"] polyline[data-series="depth"]').count(), 1);
  const dayValues = await page
    .locator('section[aria-label="Last day"] polyline[data-series="depth"]')
    .getAttribute('data-values');
  assert.equal(dayValues?.split(',').length, 96, 'a day in 15-minute slots');
  assert.match((await page.locator('[data-field="oldest-waiting"]').textContent()) ?? '', /oldest waiting/);
  // Readable without hovering: value and UTC time ticks on the chart, a legend with numbers.
  const hourDepth = page.locator('section[aria-label="Last hour"] .chart-depth');
  const ticks = await hourDepth.locator('text.tick-time').allTextContents();
  assert.equal(ticks.length, 5);
  for (const t of ticks) assert.match(t, /^\d\d:\d\d$/);
  assert.ok((await hourDepth.locator('text.tick-value').count()) >= 2);
  await hourDepth.locator('text.tick-time').first().waitFor({ state: 'visible' });
  const depthNow = hourDepth.locator('.legend li[data-series="depth"] [data-field="now"]');
  await depthNow.waitFor({ state: 'visible' });
  assert.match((await depthNow.textContent()) ?? '', /^\d+$/);
  assert.match((await hourDepth.locator('figcaption').textContent()) ?? '', /depth, by minute \(times in UTC\)/);
  const dayTicks = await page.locator('section[aria-label="Last day"] .chart-depth text.tick-time').allTextContents();
  for (const t of dayTicks) assert.match(t, /^(Sun|Mon|Tue|Wed|Thu|Fri|Sat) \d\d:\d\d$/);
  await screenshot(page, 'queue-history');
  assert.deepEqual(await seriousViolations(page), [], 'no serious or critical axe violations');

  const other = await human(db);
  const { page: stranger } = await signedInPage(browser, url, other);
  const res = await stranger.goto(`/endpoints/${endpoint.slug}/queues/inbox`);
  assert.equal(res?.status(), 404);
  const unknownQueue = await page.goto(`/endpoints/${endpoint.slug}/queues/nope`);
  assert.equal(unknownQueue?.status(), 404);
});
