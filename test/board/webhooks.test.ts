// Pins the board's webhooks page and "Received" view (docs/design/intake.md, docs/board.md):
// a token and a signed webhook added from the form, the URL and a generated secret shown
// on that answer only; set-secret, new secret, new URL and delete; a real signed delivery
// listed with its todo, its event page escaping the payload, replay making a new linked
// event; another human's endpoint, webhook and event answer 404; no form acts without CSRF.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import type { Browser } from 'playwright-core';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { keyringOf, SEALED_PREFIX } from '../../src/secrets/keyring.js';
import { testDatabase } from '../helpers/db.js';
import * as send from '../webhooks/senders.js';
import { PASSWORD, boardRequest, human, launchBrowser, screenshot, signedInPage, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_webhooks');
// A server key, as serve loads one: the board must seal the signing secrets it stores.
const keyring = keyringOf(randomBytes(32));
const { url } = await startBoard(db, 250, {}, { keyring });
const browser: Browser = await launchBrowser();
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };

async function person(name: string) {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const { endpoint } = await vendEndpoint(deps, who.id, { name, queues: ['inbox', 'ops'] }, new Date());
  return { who, cookie: `sb_session=${session.cookie}`, csrf: session.csrf, slug: endpoint.slug, id: endpoint.id };
}
type Person = Awaited<ReturnType<typeof person>>;

const get = (p: Person, path: string) => boardRequest(url, 'GET', path, p.cookie);
const post = (p: Person, path: string, form: Record<string, string> = {}) =>
  boardRequest(url, 'POST', path, p.cookie, { ...form, csrf: p.csrf });

const URL_RE = /https?:\/\/[^\s<"]+\/webhooks\/sbw_[A-Za-z0-9_-]+/;
/** A generated secret: whsec_ and the base64 of 32 random bytes. */
const SECRET_RE = /whsec_[A-Za-z0-9+/]{43}=/;

async function addWebhook(p: Person, form: Record<string, string>) {
  const res = await post(p, `/endpoints/${p.slug}/webhooks`, form);
  assert.equal(res.status, 201, res.text);
  const rows = await db.pool.query<{ id: string }>(
    'SELECT id FROM webhooks WHERE endpoint_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1',
    [p.id],
  );
  return {
    res,
    id: rows.rows[0]?.id ?? '',
    url: URL_RE.exec(res.text)?.[0] ?? '',
    secret: SECRET_RE.exec(res.text)?.[0] ?? '',
  };
}

/** A delivery as the provider sends it, to the board's server at the webhook's path. */
async function deliver(webhookUrl: string, signed: send.Signed) {
  const res = await fetch(url + new URL(webhookUrl).pathname, {
    method: 'POST',
    headers: signed.headers,
    body: signed.raw,
  });
  return { status: res.status, body: (await res.json()) as { event_id: string; todo_id: string } };
}

const count = async (table: string, endpointId: string) =>
  (await db.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE endpoint_id = $1`, [endpointId]))
    .rows[0]?.n ?? 0;

test('a token webhook and a GitHub one are added from the form; the URL and a generated secret show on that answer only', async () => {
  const me = await person('Intake');
  const token = await addWebhook(me, { provider: 'token', queue: 'inbox', name: 'ci' });
  assert.match(token.res.text, /only this once/);
  assert.ok(token.url, 'the token webhook’s URL is on the answer');
  assert.equal(token.secret, '', 'a token webhook has no signing secret');
  const github = await addWebhook(me, { provider: 'github', queue: 'ops' });
  assert.ok(github.url && github.secret, 'the GitHub webhook’s URL and generated secret are on the answer');
  const stored = await db.pool.query<{ secret: string }>('SELECT secret FROM webhooks WHERE id = $1', [github.id]);
  assert.ok(stored.rows[0]?.secret.startsWith(SEALED_PREFIX), 'the board seals the secret it stores');

  const page = await get(me, `/endpoints/${me.slug}/webhooks`);
  assert.equal(page.status, 200);
  assert.doesNotMatch(page.text, /sbw_/, 'no URL on a later view');
  assert.doesNotMatch(page.text, SECRET_RE, 'no secret on a later view');
  assert.match(page.text, new RegExp(`data-webhook="${token.id}" data-provider="token"`));
  assert.match(page.text, new RegExp(`data-webhook="${github.id}" data-provider="github"`));

  const issued = 'whsec_stripe_issued_0123456789abcdef';
  const stripe = await addWebhook(me, { provider: 'stripe', queue: 'inbox', secret: issued });
  assert.ok(stripe.url);
  assert.ok(!stripe.res.text.includes(issued), 'a secret the provider issued is never sent back');
  assert.doesNotMatch(stripe.res.text, /Signing secret<\/h3>/);

  const refused = await post(me, `/endpoints/${me.slug}/webhooks`, {
    provider: 'token',
    queue: 'inbox',
    secret: issued,
  });
  assert.equal(refused.status, 400);
  assert.match(refused.text, /data-error-for="secret"/);
  assert.ok(!refused.text.includes(issued));
  const badQueue = await post(me, `/endpoints/${me.slug}/webhooks`, { provider: 'github', queue: 'elsewhere' });
  assert.equal(badQueue.status, 400);
  assert.match(badQueue.text, /data-error-for="queue"/);
});

test('set secret, new secret and new URL answer what changed; the old URL stops; delete removes the webhook', async () => {
  const me = await person('Rotating');
  const made = await addWebhook(me, { provider: 'gitea', queue: 'inbox', name: 'forge' });
  const base = `/endpoints/${me.slug}/webhooks/${made.id}`;

  const empty = await post(me, `${base}/secret`, { secret: '' });
  assert.equal(empty.status, 400);
  assert.match(empty.text, new RegExp(`id="secret-${made.id}"[^>]*aria-invalid="true"`));
  const set = await post(me, `${base}/secret`, { secret: 'provider-issued-secret-0001' });
  assert.equal(set.status, 200);
  assert.match(set.text, /previous secret still verifies until/);
  assert.doesNotMatch(set.text, /provider-issued-secret-0001/);

  const fresh = await post(me, `${base}/new-secret`);
  assert.equal(fresh.status, 200);
  const secret = SECRET_RE.exec(fresh.text)?.[0] ?? '';
  assert.ok(secret, 'the generated secret is on the answer');
  assert.match(fresh.text, /only this once/);

  const rotated = await post(me, `${base}/rotate`);
  assert.equal(rotated.status, 200);
  const newUrl = URL_RE.exec(rotated.text)?.[0] ?? '';
  assert.ok(newUrl && newUrl !== made.url);
  const raw = await send.fixture('github-issues.json');
  assert.equal((await deliver(made.url, send.gitea(secret, 'issues', raw))).status, 404, 'the old URL stops');
  assert.equal((await deliver(newUrl, send.gitea(secret, 'issues', raw))).status, 201);

  const deleted = await post(me, `${base}/delete`);
  assert.equal(deleted.status, 303);
  assert.equal(deleted.location, `/endpoints/${me.slug}/webhooks`);
  assert.equal(await count('webhooks', me.id), 0);
  assert.equal((await post(me, `${base}/rotate`)).status, 404);
});

test('a signed delivery is listed in Received with its todo; its page escapes the payload; replay makes a new linked event', async () => {
  const me = await person('Receiving');
  const made = await addWebhook(me, { provider: 'github', queue: 'inbox' });
  const payload = JSON.parse(await send.fixture('github-issues.json')) as { issue: { title: string } };
  payload.issue.title = '<script>alert(1)</script>';
  const raw = JSON.stringify(payload);
  const first = await deliver(made.url, await send.github(made.secret, 'issues', raw, 'delivery-board-1'));
  assert.equal(first.status, 201);

  const list = await get(me, `/endpoints/${me.slug}/events`);
  assert.equal(list.status, 200);
  const row = new RegExp(`<tr data-event="${first.body.event_id}">[\\s\\S]*?</tr>`).exec(list.text)?.[0] ?? '';
  assert.ok(row, 'the event is listed');
  for (const text of ['github', 'issues.labeled', 'delivery-board-1', 'data-verified="true"', 'routed', ' UTC'])
    assert.ok(row.includes(text), `the row shows ${text}`);
  assert.ok(row.includes(`href="/todos/${first.body.todo_id}"`), 'the todo is linked');
  assert.doesNotMatch(list.text, /<script>alert/);

  const shown = await get(me, `/endpoints/${me.slug}/events/${first.body.event_id}`);
  assert.equal(shown.status, 200);
  assert.match(shown.text, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  assert.doesNotMatch(shown.text, /<script>alert/);
  assert.match(shown.text, /x-github-event/);
  assert.doesNotMatch(shown.text, /x-hub-signature-256/, 'the signature is never stored');

  const replay = await post(me, `/endpoints/${me.slug}/events/${first.body.event_id}/replay`);
  assert.equal(replay.status, 303);
  const newId = /\/events\/([^/]+)$/.exec(replay.location ?? '')?.[1] ?? '';
  assert.ok(newId && newId !== first.body.event_id);
  const replayed = await get(me, replay.location ?? '');
  assert.match(replayed.text, new RegExp(`data-replay-of="${first.body.event_id}"`));
  const todos = await db.pool.query<{ todo_ids: string[] }>('SELECT todo_ids FROM webhook_events WHERE id = $1', [
    newId,
  ]);
  const [todo] = todos.rows[0]?.todo_ids ?? [];
  assert.ok(todo && todo !== first.body.todo_id, 'the replay made a todo of its own');
  assert.ok(replayed.text.includes(`href="/todos/${todo}"`));
  assert.equal(await count('webhook_events', me.id), 2);
  const after = await get(me, `/endpoints/${me.slug}/events`);
  assert.ok(after.text.indexOf(newId) < after.text.indexOf(first.body.event_id), 'newest first');
  const one = await get(me, `/endpoints/${me.slug}/events?limit=1`);
  assert.equal(one.text.match(/<tr data-event=/g)?.length, 1, 'the limit is taken');
  assert.match(one.text, /href="[^"]+\/events\?limit=200">Show the latest 200/);
});

test("another human's endpoint, webhook and event answer 404 on every page and form", async () => {
  const owner = await person('Owned');
  const made = await addWebhook(owner, { provider: 'github', queue: 'inbox' });
  const raw = await send.fixture('github-issues.json');
  const { body } = await deliver(made.url, await send.github(made.secret, 'issues', raw));
  const other = await person('Other');
  const ep = `/endpoints/${owner.slug}`;
  for (const path of [`${ep}/webhooks`, `${ep}/events`, `${ep}/events/${body.event_id}`])
    assert.equal((await get(other, path)).status, 404, path);
  for (const action of ['rotate', 'new-secret', 'secret', 'delete'])
    assert.equal((await post(other, `${ep}/webhooks/${made.id}/${action}`, { secret: 'x'.repeat(20) })).status, 404);
  assert.equal((await post(other, `${ep}/webhooks`, { provider: 'token', queue: 'inbox' })).status, 404);
  assert.equal((await post(other, `${ep}/events/${body.event_id}/replay`)).status, 404);
  // Their own endpoint's pages do not reach the owner's webhook or event either.
  const mine = `/endpoints/${other.slug}`;
  assert.equal((await get(other, `${mine}/events/${body.event_id}`)).status, 404);
  assert.equal((await post(other, `${mine}/webhooks/${made.id}/delete`)).status, 404);
  assert.equal((await post(other, `${mine}/events/${body.event_id}/replay`)).status, 404);
  assert.equal(await count('webhooks', owner.id), 1);
  assert.equal(await count('webhook_events', owner.id), 1);
});

test('every webhook and replay form refuses a missing or wrong CSRF token, changing nothing', async () => {
  const me = await person('Guarded intake');
  const made = await addWebhook(me, { provider: 'github', queue: 'inbox' });
  const { body } = await deliver(
    made.url,
    await send.github(made.secret, 'issues', await send.fixture('github-issues.json')),
  );
  const ep = `/endpoints/${me.slug}`;
  const forms: Array<[string, Record<string, string>]> = [
    [`${ep}/webhooks`, { provider: 'token', queue: 'inbox' }],
    [`${ep}/webhooks/${made.id}/rotate`, {}],
    [`${ep}/webhooks/${made.id}/new-secret`, {}],
    [`${ep}/webhooks/${made.id}/secret`, { secret: 'y'.repeat(20) }],
    [`${ep}/webhooks/${made.id}/delete`, {}],
    [`${ep}/events/${body.event_id}/replay`, {}],
  ];
  const state = async () =>
    (
      await db.pool.query<Record<string, unknown>>(
        'SELECT id, secret, token_hash, rotated_at FROM webhooks WHERE endpoint_id = $1',
        [me.id],
      )
    ).rows;
  const before = await state();
  for (const [path, form] of forms) {
    for (const csrf of [undefined, 'not-the-token']) {
      const res = await boardRequest(url, 'POST', path, me.cookie, csrf === undefined ? form : { ...form, csrf });
      assert.equal(res.status, 403, `${path} with csrf ${csrf ?? 'missing'}`);
    }
  }
  assert.deepEqual(await state(), before);
  assert.equal(await count('webhook_events', me.id), 1);
});

test('without JavaScript, the endpoint card leads to Webhooks and Received, and a reload shows the secret no more', async () => {
  const me = await person('Plain intake');
  const { page, errors } = await signedInPage(browser, url, me.who, { javaScriptEnabled: false });
  await page.goto(`/endpoints/${me.slug}`);
  await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
  await page.getByRole('heading', { name: 'Webhooks of Plain intake', level: 1 }).waitFor();
  await page.getByLabel('Provider', { exact: true }).selectOption('github');
  await page.getByLabel('Queue its todos go to').selectOption('ops');
  await page.getByLabel('Name (optional').fill('octo <b>org</b>');
  await page.getByRole('button', { name: 'Add webhook' }).click();
  await page.getByRole('status').filter({ hasText: 'only this once' }).waitFor();
  const secret = (await page.locator('#webhook-secret').textContent()) ?? '';
  const hookUrl = (await page.locator('#webhook-url').textContent()) ?? '';
  assert.match(secret, /^whsec_/);
  await screenshot(page, 'webhooks-reveal');
  await page.goto(`/endpoints/${me.slug}/webhooks`);
  assert.equal(await page.locator('#webhook-secret').count(), 0);
  assert.equal(await page.locator('tr[data-webhook] td').first().textContent(), 'octo <b>org</b>');

  await deliver(hookUrl, await send.github(secret, 'issues', await send.fixture('github-issues.json')));
  await page.getByRole('link', { name: 'Received' }).click();
  await page.getByRole('heading', { name: 'Received by Plain intake', level: 1 }).waitFor();
  await page.locator('tr[data-event] a').first().click();
  await page.getByRole('button', { name: /^Replay/ }).click();
  await page.getByRole('status').filter({ hasText: 'This event is a replay of' }).waitFor();
  await screenshot(page, 'event-replayed');
  assert.deepEqual(errors, []);
});

test('with JavaScript, New secret shows the secret in place, the address stays the page, and a reload shows it no more', async () => {
  const me = await person('Live intake');
  await addWebhook(me, { provider: 'standard', queue: 'inbox', name: 'svix' });
  const { page, errors } = await signedInPage(browser, url, me.who);
  await page.goto(`/endpoints/${me.slug}/webhooks`);
  await page.getByRole('button', { name: 'New secret of svix' }).click();
  await page.getByRole('status').filter({ hasText: 'only this once' }).waitFor();
  assert.match((await page.locator('#webhook-secret').textContent()) ?? '', SECRET_RE);
  assert.ok(new URL(page.url()).pathname.endsWith('/webhooks'), page.url());
  await page.reload();
  await page.getByRole('heading', { name: 'Webhooks of Live intake', level: 1 }).waitFor();
  assert.equal(await page.locator('#webhook-secret').count(), 0);
  assert.deepEqual(errors, []);
});
