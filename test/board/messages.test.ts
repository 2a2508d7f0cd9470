// Pins the session page's message queue panel (docs/design/message-queue.md) and the
// capacity setting: rows of three provenances (the page, an agent's send_message over
// MCP, a workflow token) numbered #1..#N and labelled, arriving live over /ws; Remove on
// every row, Edit only on the viewer's own, Clear all; the same through full-page forms
// without JavaScript; the capacity saved by an admin and read-only for a member, and the
// panel's full state.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { newId } from '../../src/domain/ids.js';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { newSecret } from '../../src/identity/secrets.js';
import { insertApiToken } from '../../src/store/api-tokens.js';
import { testDatabase } from '../helpers/db.js';
import { connect, ok } from '../mcp/harness.js';
import { human, launchBrowser, screenshot, signedInPage, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_messages');
const { url } = await startBoard(db);
const browser: Browser = await launchBrowser();
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };

/** A human with a live session on one endpoint and a second endpoint (the agent that sends). */
async function world(role: 'admin' | 'member' = 'member') {
  const who = await human(db, role);
  // The sending agent is another endpoint: the listener accepts agent messages (opt-in).
  const target = await vendEndpoint(deps, who.id, { name: 'Listener', accept_agent_messages: true }, new Date());
  const sender = await vendEndpoint(deps, who.id, { name: 'Sender' }, new Date());
  const session = await connect(url, target.credential);
  const agent = await connect(url, sender.credential);
  const { secret, hash } = newSecret('sbt');
  await insertApiToken(db.pool, {
    id: newId('tk'),
    humanId: who.id,
    kind: 'workflow',
    name: 'ci',
    tokenHash: hash,
    expiresAt: null,
  });
  const viaWorkflow = async (content: string) => {
    const res = await fetch(`${url}/api/v1/sessions/${session.sessionId}/queue`, {
      method: 'POST',
      headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ content }),
    });
    assert.equal(res.status, 201);
  };
  const viaAgent = (content: string) => ok(agent, 'send_message', { session_id: session.sessionId, content });
  return { who, sessionId: session.sessionId, viaWorkflow, viaAgent };
}

const rows = (page: Page) => page.locator('#message-queue li[data-entry]');
const row = (page: Page, by: string) => page.locator(`#message-queue li[data-queued-by="${by}"]`);

async function addFromPage(page: Page, content: string) {
  await page.getByLabel('Queue a message').fill(content);
  await page.getByRole('button', { name: 'Add', exact: true }).click();
  await page.locator('#message-queue li', { hasText: content }).waitFor();
}

test('three provenances arrive live with positions and labels; Edit only on my own row; Remove and Clear all', async () => {
  const w = await world();
  const { page, errors } = await signedInPage(browser, url, w.who);
  await page.goto(`/sessions/${w.sessionId}`);
  await page.waitForFunction(() => document.documentElement.getAttribute('data-queue-live') === 'true');

  await addFromPage(page, 'from me');
  await page.waitForFunction(() => document.documentElement.getAttribute('data-queue-live') === 'true');
  await w.viaAgent('from the agent');
  await row(page, 'agent').waitFor();
  await w.viaWorkflow('from the workflow');
  await row(page, 'workflow').waitFor();
  assert.deepEqual(await page.locator('#message-queue .position').allTextContents(), ['#1', '#2', '#3']);
  assert.deepEqual(await page.locator('#message-queue [data-provenance]').allTextContents(), [
    'you (board)',
    'agent',
    'workflow',
  ]);
  assert.equal(await page.locator('[data-capacity]').textContent(), '3 of 10');
  assert.equal(
    await rows(page)
      .getByRole('button', { name: /^Remove/ })
      .count(),
    3,
  );
  assert.equal(await rows(page).getByRole('button', { name: /^Edit/ }).count(), 1);
  assert.equal(await row(page, 'user').getByRole('button', { name: /^Edit/ }).count(), 1);
  await screenshot(page, 'session-messages');

  await page.getByLabel('Edit #1').fill('from me, edited');
  await row(page, 'user').getByRole('button', { name: /^Edit/ }).click();
  await row(page, 'user').filter({ hasText: 'from me, edited' }).waitFor();
  await row(page, 'agent')
    .getByRole('button', { name: /^Remove/ })
    .click();
  await row(page, 'agent').waitFor({ state: 'detached' });
  assert.deepEqual(await page.locator('#message-queue .position').allTextContents(), ['#1', '#2']);
  await page.getByRole('button', { name: 'Clear all' }).click();
  await page.getByText('No queued messages.').waitFor();
  assert.equal(await page.locator('[data-capacity]').textContent(), '0 of 10');
  assert.deepEqual(errors, []);
});

test('without JavaScript, add, edit, remove and Clear all work as full-page forms', async () => {
  const w = await world();
  const { page } = await signedInPage(browser, url, w.who, { javaScriptEnabled: false });
  await page.goto(`/sessions/${w.sessionId}`);
  await addFromPage(page, 'plain one');
  await w.viaWorkflow('plain workflow');
  await w.viaAgent('plain agent');
  await page.reload();
  assert.deepEqual(await page.locator('#message-queue [data-provenance]').allTextContents(), [
    'you (board)',
    'workflow',
    'agent',
  ]);
  assert.equal(await row(page, 'workflow').getByRole('button', { name: /^Edit/ }).count(), 0);
  await page.getByLabel('Edit #1').fill('plain one, edited');
  await row(page, 'user').getByRole('button', { name: /^Edit/ }).click();
  await row(page, 'user').filter({ hasText: 'plain one, edited' }).waitFor();
  await row(page, 'workflow')
    .getByRole('button', { name: /^Remove/ })
    .click();
  assert.equal(await row(page, 'workflow').count(), 0);
  assert.deepEqual(await page.locator('#message-queue .position').allTextContents(), ['#1', '#2']);
  await page.getByRole('button', { name: 'Clear all' }).click();
  await page.getByText('No queued messages.').waitFor();

  const other = await world();
  const foreign = await page.goto(`/sessions/${other.sessionId}`);
  assert.equal(foreign?.status(), 404);
});

test('an admin saves the capacity; a member sees it read-only; a full queue says so', async () => {
  const admin = await human(db, 'admin');
  const { page, errors } = await signedInPage(browser, url, admin);
  await page.getByRole('link', { name: 'Settings' }).click();
  assert.equal(await page.locator('[data-setting="capacity-source"]').textContent(), 'default');
  await page.getByLabel('Messages per session (0 means unlimited)').fill('many');
  await page.getByRole('button', { name: 'Save capacity' }).click();
  await page.getByRole('alert').filter({ hasText: 'max_per_session' }).waitFor();
  await page.getByLabel('Messages per session (0 means unlimited)').fill('2');
  await page.getByRole('button', { name: 'Save capacity' }).click();
  await page.locator('[data-setting="capacity-source"]').filter({ hasText: 'setting' }).waitFor();
  assert.equal(await page.locator('[data-setting="capacity-effective"]').textContent(), '2');
  await screenshot(page, 'settings-admin');
  // The refused save answered 400 on purpose; nothing else may complain.
  assert.deepEqual(
    errors.filter((e) => !e.includes('status of 400')),
    [],
  );

  const w = await world('member');
  const member = await signedInPage(browser, url, w.who, { javaScriptEnabled: false });
  await member.page.goto('/settings');
  assert.equal(await member.page.locator('[data-setting="capacity-source"]').textContent(), 'setting');
  assert.equal(await member.page.getByLabel('Messages per session (0 means unlimited)').isDisabled(), true);
  assert.equal(await member.page.getByRole('button', { name: 'Save capacity' }).count(), 0);
  await member.page.getByText('Only an admin can change this.').waitFor();

  await member.page.goto(`/sessions/${w.sessionId}`);
  await w.viaWorkflow('one');
  await w.viaAgent('two');
  await member.page.reload();
  assert.equal(await member.page.locator('[data-capacity]').textContent(), '2 of 2 · full');
  assert.equal(await member.page.getByRole('button', { name: 'Add', exact: true }).isDisabled(), true);
});
