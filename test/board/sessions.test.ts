// Pins what the board shows of an endpoint's live sessions, on the card and on the session
// page: the id, client, stream state, unheard mark, last ring, claims held and a link to
// the session's message queue; a session that holds no notification stream reads
// "reconnect needed", unless it never opened one nor asked for doorbells: "pulls (no
// stream)", not an alarm. Runs on the composition root, so rings are really written.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser } from 'playwright-core';
import { pushTodo } from '../../src/endpoints/todos.js';
import { testDatabase } from '../helpers/db.js';
import { agent, endpointOf, server, tool, until } from '../doorbell/world.js';
import { human, launchBrowser, screenshot, signedInPage } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_sessions');
const s = await server(db.url, 'board-sessions');
const browser: Browser = await launchBrowser();
const todoDeps = { db: db.pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 };

test('the card and the session page show id, stream, last ring, claims held and "reconnect needed" without a stream', async () => {
  const who = await human(db);
  const ep = await endpointOf(db.pool, who.id, 'Sessions');
  const listener = await agent(db.pool, s.url, ep.credential, { name: 'listener' });
  const deaf = await agent(db.pool, s.url, ep.credential, { name: 'no-stream', stream: false });
  const puller = await agent(db.pool, s.url, ep.credential, { name: 'puller', stream: false, channel: false });

  const { todo } = await pushTodo(todoDeps, who.id, ep.slug, { queue: 'inbox', title: 'ring me' }, new Date());
  await until(() => listener.heard.length > 0, 'the listener to hear the doorbell', 20_000);
  const claimed = await tool(listener, 'claim', { id: todo.id });
  assert.equal(claimed.isError, undefined, JSON.stringify(claimed));

  const { page, errors } = await signedInPage(browser, url(), who);
  await page.goto(`/endpoints/${ep.slug}`);
  const live = page.locator(`tr[data-session="${listener.sessionId}"]`);
  const quiet = page.locator(`tr[data-session="${deaf.sessionId}"]`);
  assert.match((await live.textContent()) ?? '', new RegExp(listener.sessionId));
  assert.equal(await live.locator('[data-slot="stream"]').textContent(), 'open');
  assert.notEqual(await live.locator('[data-field="last_ring"]').textContent(), 'never');
  assert.equal(await live.locator('[data-field="claims_held"]').textContent(), '1');
  assert.equal(
    await live.getByRole('link', { name: `Messages of ${listener.sessionId}` }).getAttribute('href'),
    `/sessions/${listener.sessionId}#message-queue`,
  );
  assert.equal(await quiet.locator('[data-slot="stream"]').textContent(), 'reconnect needed');
  const pulls = page.locator(`tr[data-session="${puller.sessionId}"] [data-slot="stream"]`);
  assert.equal(await pulls.textContent(), 'pulls (no stream)');
  assert.equal(await pulls.getAttribute('class'), 'chip', 'a neutral chip, not a warning');
  assert.equal(await quiet.locator('[data-field="last_ring"]').textContent(), 'never');
  assert.equal(await quiet.locator('[data-field="claims_held"]').textContent(), '0');
  await screenshot(page, 'endpoint-sessions');

  await quiet.getByRole('link', { name: deaf.sessionId, exact: true }).click();
  await page.getByRole('heading', { name: 'Session of Sessions', level: 1 }).waitFor();
  assert.equal(await page.locator('main dl [data-slot="stream"]').textContent(), 'reconnect needed');
  assert.match((await page.locator('main dl').textContent()) ?? '', new RegExp(deaf.sessionId));
  await page.locator('#message-queue').waitFor();

  await page.goto(`/sessions/${listener.sessionId}`);
  assert.equal(await page.locator('main dl [data-field="claims_held"]').textContent(), '1');
  assert.notEqual(await page.locator('main dl [data-field="last_ring"]').textContent(), 'never');
  await screenshot(page, 'session-page');

  // The unheard mark shows on both once the sweep has set it.
  await db.pool.query('UPDATE mcp_sessions SET unheard = true WHERE id = $1', [listener.sessionId]);
  await page.reload();
  await page.locator('main dl [data-slot="unheard"]').waitFor();
  await page.goto(`/endpoints/${ep.slug}`);
  await live.locator('[data-slot="unheard"]').waitFor();
  // A stream that was open and is not any more (as its instance records a drop) is an alarm.
  await db.pool.query('UPDATE mcp_sessions SET stream_open = false WHERE id = $1', [listener.sessionId]);
  await page.reload();
  assert.equal(await live.locator('[data-slot="stream"]').textContent(), 'reconnect needed');
  assert.deepEqual(errors, []);
});

function url(): string {
  return s.url;
}
