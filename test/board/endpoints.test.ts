// Pins the endpoints pages in a real browser: the vend wizard end to end with JavaScript
// on and off (admission unchecked with its note, one-time reveal of a working
// credential), sessions on the card, revoke and delete, and labelled form controls.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { WITHOUT_SESSION } from '../../src/domain/guidance.js';
import { connect, ok } from '../mcp/harness.js';
import { testDatabase } from '../helpers/db.js';
import { human, launchBrowser, liveOpen, screenshot, signedInPage, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_endpoints');
const { url } = await startBoard(db);
const browser: Browser = await launchBrowser();

async function walkWizard(page: Page, name: string, shots: string | null): Promise<string> {
  await page.goto('/endpoints');
  await page.getByRole('link', { name: 'Vend an endpoint' }).click();
  await page.getByLabel('Name').fill(name);
  if (shots) await screenshot(page, `${shots}-1-name`);
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByLabel('Queues (separated by commas or spaces)').fill('inbox, builds');
  await page.getByRole('button', { name: 'Next' }).click();

  const admission = page.getByRole('checkbox', { name: /^admission / });
  assert.equal(await admission.isChecked(), false);
  assert.equal(await page.getByRole('checkbox', { name: /^drain / }).isChecked(), true);
  assert.match((await page.locator('fieldset').textContent()) ?? '', /lets the agent change its own budget/);
  if (shots) await screenshot(page, `${shots}-3-verbs`);
  await page.getByRole('checkbox', { name: /^messages / }).uncheck();
  await page.getByRole('button', { name: 'Next' }).click();

  await page.getByRole('radio', { name: '7 days' }).check();
  await page.getByRole('button', { name: 'Back' }).click();
  assert.equal(await page.getByRole('checkbox', { name: /^messages / }).isChecked(), false, 'Back keeps the answers');
  await page.getByRole('button', { name: 'Next' }).click();
  await page.getByRole('radio', { name: '7 days' }).check();
  await page.getByRole('button', { name: 'Next' }).click();

  const summary = (await page.locator('main dl').textContent()) ?? '';
  assert.match(summary, /inbox, builds/);
  assert.match(summary, /drain, create/);
  assert.doesNotMatch(summary, /messages|admission/);
  assert.match(summary, /7 days/);
  await page.getByRole('button', { name: 'Vend endpoint' }).click();
  await page.getByRole('heading', { name: 'Endpoint vended', level: 1 }).waitFor();
  if (shots) await screenshot(page, `${shots}-6-reveal`);

  const credential = ((await page.locator('#credential').textContent()) ?? '').trim();
  assert.match(credential, /^sbk_/);
  const mcpJson = JSON.parse((await page.locator('#mcp-json').textContent()) ?? '');
  const [slug] = Object.keys(mcpJson.mcpServers);
  assert.equal(mcpJson.mcpServers[slug!].headers.Authorization, `Bearer ${credential}`);
  assert.match((await page.locator('#claude-mcp-add').textContent()) ?? '', /^claude mcp add --transport http /);
  assert.equal(await page.locator('#guidance').getAttribute('data-server-name'), slug, 'guidance names that server');
  const command = (await page.locator('#claude-code-command').textContent()) ?? '';
  assert.ok(command.includes(`--dangerously-load-development-channels server:${slug!} --allowedTools mcp__${slug!}`));
  assert.match((await page.locator('#bridge-command').textContent()) ?? '', /^switchboard bridge --url http/);
  assert.match((await page.locator('#troubleshooting').getAttribute('href')) ?? '', /^http.*\/docs\/doorbell$/);
  assert.equal(((await page.locator('#lease-token-sentence').textContent()) ?? '').trim(), WITHOUT_SESSION);
  const recipe = ((await page.locator('#inspector-recipe').textContent()) ?? '').split('\n');
  assert.equal(recipe.length, 3, recipe.join('\n'));
  for (const command of recipe) {
    assert.ok(command.startsWith('npx @modelcontextprotocol/inspector --cli http'), command);
    assert.ok(
      command.includes(`/mcp --transport http --header "Authorization: Bearer ${credential}" --method `),
      command,
    );
  }
  assert.match(recipe[2] ?? '', /--tool-name complete --tool-arg id=<TODO_ID> lease_token=<LEASE_TOKEN>$/);
  return credential;
}

for (const javaScriptEnabled of [true, false]) {
  const mode = javaScriptEnabled ? 'with JavaScript' : 'without JavaScript';
  test(`${mode}, the wizard vends a working endpoint, the card shows its session, then revoke and delete`, async () => {
    const who = await human(db);
    const { page } = await signedInPage(browser, url, who, { javaScriptEnabled });
    const name = `Wizard ${javaScriptEnabled ? 'js' : 'plain'}`;
    const credential = await walkWizard(page, name, javaScriptEnabled ? 'wizard' : null);

    await page.goto('/endpoints');
    if (javaScriptEnabled) await liveOpen(page);
    const agent = await connect(url, credential, 'wizard-agent');
    const me = await ok(agent, 'whoami');
    assert.deepEqual(me.endpoint.queues, ['inbox', 'builds']);
    const verbs = me.endpoint.verbs as string[];
    assert.ok(verbs.includes('claim_next') && !verbs.includes('send_message'));

    // With JavaScript the new session appears on the open page by itself.
    if (!javaScriptEnabled) await page.reload();
    const card = page.locator(`article[data-endpoint="${me.endpoint.slug}"]`);
    await card.getByText('wizard-agent 1.2.3').waitFor({ timeout: 5000 });
    assert.match((await card.textContent()) ?? '', /active/);
    const created = card.locator('time').first();
    const utc = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/;
    if (javaScriptEnabled) {
      assert.match((await created.getAttribute('title')) ?? '', utc, 'UTC moves to the tooltip');
      assert.doesNotMatch((await created.textContent()) ?? '', / UTC$/, 'shown in the viewer’s zone');
      await screenshot(page, 'endpoints');
    } else {
      assert.match((await created.textContent()) ?? '', utc);
    }

    await card.getByRole('link', { name: me.session_id, exact: true }).click();
    await page.getByRole('heading', { name: `Session of ${name}` }).waitFor();
    assert.match((await page.locator('main dl').textContent()) ?? '', new RegExp(`${me.session_id}[^]*open`));
    if (javaScriptEnabled) await screenshot(page, 'session');
    await page.getByRole('link', { name: 'Endpoints', exact: true }).click();

    const confirms: string[] = [];
    page.on('dialog', (dialog) => {
      confirms.push(dialog.message());
      void dialog.accept();
    });
    await card.getByRole('button', { name: `Revoke ${name}` }).click();
    await card.locator('.chip.revoked').waitFor();
    const refused = await agent.client.callTool({ name: 'whoami', arguments: {} }).then(
      () => 'answered',
      () => 'refused',
    );
    assert.equal(refused, 'refused');

    await card.getByRole('button', { name: `Delete ${name}` }).click();
    await page.getByRole('heading', { name: 'Endpoints', level: 1 }).waitFor();
    await card.waitFor({ state: 'detached' });
    assert.deepEqual(confirms.length, javaScriptEnabled ? 2 : 0, 'JavaScript asks before revoke and delete');
  });
}

test('every form control on the board pages has a label, and every button a name', async () => {
  const who = await human(db);
  const { page } = await signedInPage(browser, url, who);
  const unlabeled = async () =>
    page.evaluate(() =>
      [...document.querySelectorAll('input:not([type=hidden]), select, textarea, button')]
        .filter((el) =>
          el.tagName === 'BUTTON'
            ? !(el.textContent ?? '').trim()
            : !((el as HTMLInputElement).labels?.length || el.getAttribute('aria-label')),
        )
        .map((el) => el.outerHTML.slice(0, 80)),
    );
  const seen: Record<string, string[]> = {};
  seen['login'] = await (async () => {
    const anon = await browser.newContext({ baseURL: url });
    const p = await anon.newPage();
    await p.goto('/login');
    const found = await p.evaluate(() =>
      [...document.querySelectorAll('input:not([type=hidden])')]
        .filter((el) => !(el as HTMLInputElement).labels?.length)
        .map((el) => el.outerHTML),
    );
    await anon.close();
    return found;
  })();
  await page.goto('/endpoints/new');
  const steps = ['name', 'queues', 'verbs', 'lifetime', 'confirm'];
  for (const [i, step] of steps.entries()) {
    // Each Next is a full-page post: read the step only once its page has arrived, or a
    // slow answer leaves this loop reading (and clicking) the previous one.
    await page.getByText(`Step ${i + 1} of ${steps.length}: ${step}`).waitFor();
    seen[`wizard ${step}`] = await unlabeled();
    if (step === 'name') await page.getByLabel('Name').fill('Labels');
    if (step !== 'confirm') await page.getByRole('button', { name: 'Next' }).click();
  }
  await page.getByRole('button', { name: 'Vend endpoint' }).click();
  await page.getByRole('heading', { name: 'Endpoint vended' }).waitFor();
  for (const path of ['/', '/settings', '/people', '/endpoints']) {
    await page.goto(path);
    seen[path] = await unlabeled();
  }
  await page.getByRole('link', { name: 'Labels', exact: true }).click();
  seen['endpoint page'] = await unlabeled();
  await page.getByRole('link', { name: 'Budget of inbox' }).click();
  await page.getByRole('button', { name: 'Save budget' }).waitFor();
  seen['budget editor'] = await unlabeled();
  await page.goBack();
  await page.getByRole('link', { name: 'Edit Labels' }).click();
  await page.getByRole('button', { name: 'Rotate the credential' }).waitFor();
  seen['edit page'] = await unlabeled();
  for (const [where, list] of Object.entries(seen)) assert.deepEqual(list, [], `unlabeled on ${where}`);
});

test('a member reads the settings page: retention shown read-only, naming the variable that sets it', async () => {
  const who = await human(db, 'member');
  const { page } = await signedInPage(browser, url, who);
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('heading', { name: 'Settings', level: 1 }).waitFor();
  assert.equal(await page.locator('[data-setting="retention"]').textContent(), '30 days');
  assert.match((await page.locator('main').textContent()) ?? '', /SWITCHBOARD_RETENTION/);
  assert.equal(await page.locator('main button[type="submit"]').count(), 0, 'a member changes nothing here');
  await screenshot(page, 'settings');
});
