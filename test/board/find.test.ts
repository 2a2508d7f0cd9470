// Pins finding todos on the board in Chromium: the queues page's search box narrows to
// the matching todos; filters combine into a bookmarkable URL that loads the same list;
// pages follow a cursor; "Cancel all matches" shows a count and a confirmation and only
// then cancels exactly the matches; the todo page shows the attempts timeline with the
// session linked, the waiting reason, the pretty-printed payload and result, and the creator.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { insertSession } from '../../src/store/sessions.js';
import { claim, createTodo, fail } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { launchBrowser, human, screenshot, signedInPage, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_find');
const { url } = await startBoard(db);
const browser = await launchBrowser();
const deps = { db: db.pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 };

async function person() {
  const who = await human(db);
  const { endpoint } = await vendEndpoint(deps, who.id, { name: 'Finder', queues: ['inbox', 'later'] }, new Date());
  const push = async (title: string, extra: Record<string, unknown> = {}) =>
    (await createTodo(deps, { endpointId: endpoint.id }, { humanId: who.id }, { queue: 'inbox', title, ...extra }))
      .todo;
  return { who, endpoint, push };
}

const rowTitles = async (page: import('playwright-core').Page) =>
  (await page.locator('table.found tbody tr td:first-child a').allTextContents()).sort();

test('the search box on the queues page narrows to the todos whose titles match', async () => {
  const p = await person();
  await p.push('Pay invoice 17');
  await p.push('Send INVOICE reminder');
  await p.push('Water the plants');
  const { page, errors } = await signedInPage(browser, url, p.who);
  await page.getByLabel('Search todos').fill('invoice');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByRole('heading', { name: 'Todos', level: 1 }).waitFor();
  await page.waitForURL(/\/todos\?q=invoice/);
  assert.deepEqual(await rowTitles(page), ['Pay invoice 17', 'Send INVOICE reminder']);
  await screenshot(page, 'todos-search');
  assert.deepEqual(errors, []);
});

test('filters combine, and loading the URL directly shows the same list; pages follow the cursor', async () => {
  const p = await person();
  for (let i = 0; i < 53; i++) await p.push(`report ${i}`, { priority: 2 });
  await p.push('report low', { priority: -1 });
  await p.push('report later', { queue: 'later', priority: 2 });
  await p.push('other', { priority: 2 });
  const { page } = await signedInPage(browser, url, p.who);
  await page.goto('/todos');
  await page.getByLabel('Title contains').fill('report');
  await page.getByLabel('Queue').fill('inbox');
  await page.getByLabel('Priority (at least)').fill('0');
  await page.getByRole('button', { name: 'Filter' }).click();
  await page.waitForURL(/priority_min=0/);
  const first = await rowTitles(page);
  assert.equal(first.length, 50);
  const bookmark = page.url();
  assert.match(bookmark, /q=report/);
  assert.match(bookmark, /queue=inbox/);

  const { page: fresh } = await signedInPage(browser, url, p.who);
  await fresh.goto(bookmark);
  assert.deepEqual(await rowTitles(fresh), first);

  await fresh.getByRole('link', { name: 'Next page' }).click();
  await fresh.waitForURL(/cursor=/);
  const second = await rowTitles(fresh);
  assert.equal(second.length, 3);
  assert.equal(await fresh.getByRole('link', { name: 'Next page' }).count(), 0);
  const all = new Set([...first, ...second]);
  assert.equal(all.size, 53);
  for (let i = 0; i < 53; i++) assert.ok(all.has(`report ${i}`));
});

test('"Cancel all matches" shows the count and a confirmation, and only then cancels exactly the matches', async () => {
  const p = await person();
  const matches = [await p.push('flaky deploy a'), await p.push('flaky deploy b')];
  const other = await p.push('steady deploy');
  const { page } = await signedInPage(browser, url, p.who);
  await page.goto(`/todos?q=flaky&endpoint=${p.endpoint.slug}&state=pending`);
  await page.getByRole('button', { name: 'Cancel all matches' }).click();
  await page.getByRole('heading', { name: 'Cancel all matches', level: 1 }).waitFor();
  assert.equal(await page.locator('[data-matched]').getAttribute('data-matched'), '2');
  const states = async () =>
    (
      await db.pool.query<{ id: string; state: string }>(`SELECT id, state FROM todos WHERE endpoint_id = $1`, [
        p.endpoint.id,
      ])
    ).rows.reduce<Record<string, string>>((m, r) => ({ ...m, [r.id]: r.state }), {});
  assert.ok(
    Object.values(await states()).every((s) => s === 'pending'),
    'the confirmation changed nothing',
  );
  await screenshot(page, 'todos-bulk-confirm');
  await page.getByRole('button', { name: 'Cancel 2 todo(s)' }).click();
  await page.getByRole('heading', { name: 'Done', level: 1 }).waitFor();
  assert.equal(await page.locator('[data-changed]').getAttribute('data-changed'), '2');
  const after = await states();
  for (const t of matches) assert.equal(after[t.id], 'canceled');
  assert.equal(after[other.id], 'pending');
});

test('the todo page shows the attempts timeline with the session linked, the waiting reason, payload, result and creator', async () => {
  const p = await person();
  const sessionId = `ms_${'A'.repeat(26)}`;
  await insertSession(db.pool, {
    endpointId: p.endpoint.id,
    id: sessionId,
    clientName: 'claude-code',
    clientVersion: '1.0',
    instance: 'i',
  });
  const agent = { endpointId: p.endpoint.id, sessionId, queues: ['inbox', 'later'], defaultLeaseSeconds: null };
  const todo = await p.push('Crunch numbers', { payload: { rows: [1, 2], mode: 'fast' } });
  await claim(deps, agent, { id: todo.id });
  await fail(deps, agent, { id: todo.id, error: 'disk full', result: { partial: true } });
  const scheduled = await p.push('Later work', { not_before: new Date(Date.now() + 86_400_000).toISOString() });

  const { page } = await signedInPage(browser, url, p.who);
  await page.goto(`/todos/${todo.id}`);
  const attempt = page.locator('[data-slot="attempts"] tr[data-attempt="1"]');
  await attempt.waitFor();
  assert.match(await attempt.innerText(), /failed|fail/);
  const link = attempt.getByRole('link', { name: sessionId });
  assert.equal(await link.getAttribute('href'), `/sessions/${sessionId}`);
  assert.match(await page.locator('[data-field="creator"]').innerText(), new RegExp(`human ${p.who.id}`));
  const pres = await page.locator('pre').allTextContents();
  assert.ok(pres.includes(JSON.stringify({ mode: 'fast', rows: [1, 2] }, null, 2)), pres.join('\n---\n'));
  assert.ok(pres.includes(JSON.stringify({ partial: true }, null, 2)), pres.join('\n---\n'));
  await screenshot(page, 'todo-page');
  await link.click();
  await page.waitForURL(`${url}/sessions/${sessionId}`);

  await page.goto(`/todos/${scheduled.id}`);
  const waiting = page.locator('[data-field="waiting"]');
  await waiting.waitFor();
  assert.ok((await waiting.getAttribute('data-waiting'))?.length);
});
