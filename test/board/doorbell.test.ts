// Pins the doorbell parts of the board (docs/design/doorbell-acknowledgement.md) and an
// endpoint card's hooks and presence (docs/design/hooks-and-presence.md) on the
// composition root (pump, ring writer, self-test ringer): "Run self-test" against a
// client that claims its doorbell shows pass live; against one that hears nothing the
// result page (no JavaScript: it refreshes itself) turns unheard with the hints once the
// test's deadline is moved in SQL; the todo drawer lists a todo's rings with how they
// were heard; the card shows the unheard mark, hook health and presence, and the owner
// clocks the endpoint out and in.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser } from 'playwright-core';
import { pino } from 'pino';
import { pushTodo } from '../../src/endpoints/todos.js';
import { unheardSweep } from '../../src/sweeps/unheard.js';
import { createHook } from '../../src/hooks/manage.js';
import { HookGuard } from '../../src/hooks/guard.js';
import { testDatabase } from '../helpers/db.js';
import { agent, endpointOf, expireTest, server, tool, until } from '../doorbell/world.js';
import { human, launchBrowser, screenshot, signedInPage } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_doorbell');
const s = await server(db.url, 'board-doorbell');
const url = s.url;
const browser: Browser = await launchBrowser();
const todoDeps = { db: db.pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 };

test('Run self-test against a listening client shows pass live, and the drawer lists the rings it heard', async () => {
  const who = await human(db);
  const ep = await endpointOf(db.pool, who.id, 'Listening');
  await agent(db.pool, url, ep.credential, { name: 'claude-code', claimOnRing: true });
  const { page, errors } = await signedInPage(browser, url, who);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Endpoints' }).click();
  await page.getByRole('button', { name: 'Run self-test Listening' }).click();
  await page.getByRole('heading', { name: 'Doorbell self-test' }).waitFor();
  await page.locator('[data-verdict="pass"]').waitFor({ timeout: 10_000 });
  assert.equal(await page.locator('[data-hints]').count(), 0, 'a pass has no hints');
  await screenshot(page, 'self-test-pass');

  // A quiet client of a second endpoint: its ring stays open until it claims by hand.
  const quietEp = await endpointOf(db.pool, who.id, 'Quiet');
  const quiet = await agent(db.pool, url, quietEp.credential);
  const { todo } = await pushTodo(todoDeps, who.id, quietEp.slug, { queue: 'inbox', title: 'ring me' }, new Date());
  await until(
    async () => (await db.pool.query(`SELECT 1 FROM doorbell_rings WHERE todo_id = $1`, [todo.id])).rowCount === 1,
    'the ring to be recorded',
    20_000,
  );
  await page.goto('/');
  await page.locator(`[data-todo="${todo.id}"] a`).click();
  const ring = page.locator('#drawer [data-slot="rings"] tr[data-ring]');
  await ring.waitFor();
  assert.equal(await ring.getAttribute('data-ring-state'), 'open');
  assert.match((await ring.textContent()) ?? '', /delivered, no answer yet/);
  await tool(quiet, 'claim', { id: todo.id });
  await page.locator('#drawer [data-close-drawer]').click();
  await page.locator(`[data-todo="${todo.id}"] a`).click();
  await page.locator('#drawer tr[data-ring][data-ring-state="heard"]').filter({ hasText: 'claim at' }).waitFor();
  assert.deepEqual(errors, []);
});

test('without JavaScript, a client that hears nothing turns the refreshing result page unheard, with hints', async () => {
  const who = await human(db);
  const ep = await endpointOf(db.pool, who.id, 'Deaf');
  const deaf = await agent(db.pool, url, ep.credential, { name: 'claude-code' });
  const { page } = await signedInPage(browser, url, who, { javaScriptEnabled: false });
  await page.goto(`/endpoints/${ep.slug}`);
  await page.getByRole('button', { name: 'Run self-test Deaf' }).click();
  await page.locator('[data-verdict="pending"]').waitFor();
  const testId = page.url().split('/').pop() ?? '';
  await until(async () => deaf.heard.length === 1, 'the test ring to be delivered');
  await expireTest(db.pool, testId);
  // No reload from here: the page's Refresh header brings the verdict.
  await page.locator('[data-verdict="unheard"]').waitFor({ timeout: 10_000 });
  assert.match((await page.locator('[data-hints]').textContent()) ?? '', /--dangerously-load-development-channels/);
  await screenshot(page, 'self-test-unheard');

  // Three more rings go unanswered past the ack window (moved in SQL); the unheard sweep
  // marks the session, and the card shows it. Each ring is aged before the next push: a
  // session with an unanswered ring is not rung again (one ring per idle agent).
  const age = () =>
    db.pool.query(`UPDATE mcp_sessions SET last_rung_at = last_rung_at - interval '1 hour' WHERE id = $1`, [
      deaf.sessionId,
    ]);
  await age();
  for (const title of ['one', 'two', 'three']) {
    const before = deaf.heard.length;
    await pushTodo(todoDeps, who.id, ep.slug, { queue: 'inbox', title }, new Date());
    await until(async () => deaf.heard.length > before, `the ring of todo ${title}`, 20_000);
    await age();
  }
  await page.goto(`/endpoints/${ep.slug}`);
  assert.equal(await page.locator('[data-slot="unheard"]').count(), 0, 'no mark while the window is open');
  await db.pool.query(
    `UPDATE doorbell_rings SET sent_at = sent_at - interval '1 hour' WHERE endpoint_id = $1 AND acked_at IS NULL`,
    [ep.id],
  );
  await unheardSweep({ db: db.pool, log: pino({ level: 'silent' }), ackWindowMs: 15 * 60_000 }).run();
  await page.goto(`/endpoints/${ep.slug}`);
  await page
    .locator(`tr[data-session="${deaf.sessionId}"] [data-slot="unheard"]`)
    .filter({ hasText: 'unheard' })
    .waitFor();
});

test("an endpoint card shows its hooks' health and its presence, and the owner clocks it out and in", async () => {
  const who = await human(db);
  const ep = await endpointOf(db.pool, who.id, 'Hooked');
  const guard = new HookGuard({ allowHttp: true, allowCidrs: ['127.0.0.0/8'] });
  const hook = await createHook(
    { db: db.pool, guard },
    { id: ep.id, queues: ['inbox'] },
    { url: 'http://127.0.0.1:9/wake' },
  );
  await db.pool.query(
    `UPDATE notify_hooks SET last_status = 503, last_error = 'upstream <down>', consecutive_failures = 3 WHERE id = $1`,
    [hook.hook_id],
  );
  const { page, errors } = await signedInPage(browser, url, who);
  await page.goto(`/endpoints/${ep.slug}`);
  const row = page.locator(`tr[data-hook="${hook.hook_id}"]`);
  assert.equal(await row.locator('[data-hook-field="last_status"]').textContent(), '503');
  assert.equal(await row.locator('[data-hook-field="last_error"]').textContent(), 'upstream <down>');
  assert.equal(await row.locator('[data-hook-field="failures"]').textContent(), '3');

  const presence = page.locator('[data-slot="presence"]');
  assert.equal(await presence.getAttribute('data-presence'), 'in');
  await page.getByRole('button', { name: 'Clock out Hooked' }).click();
  await page.locator('[data-slot="presence"][data-presence="out"]').filter({ hasText: 'operator' }).waitFor();
  await screenshot(page, 'endpoint-card-presence');
  await page.getByRole('button', { name: 'Clock in Hooked' }).click();
  await page.locator('[data-slot="presence"][data-presence="in"]').waitFor();
  assert.deepEqual(errors, []);
});
