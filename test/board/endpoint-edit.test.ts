// Pins the board's endpoint edit page (docs/design/mcp-surface.md, "Changing an endpoint"
// and "Rotating a credential"): the owner changes the name, the default lease and adds
// queues with a no-JS form; a refused field is shown under its input with what was typed
// kept and nothing written; a rotation shows the new credential once, keeps the slug, and
// the old credential works for exactly the grace picked; another human, a revoked
// endpoint and a post without the CSRF token get nothing.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { testDatabase } from '../helpers/db.js';
import { mcpStatus, person, startOAuthServer } from '../oauth/harness.js';
import { boardRequest } from './harness.js';

const db = await testDatabase('board_endpoint_edit');
const server = await startOAuthServer(db);
const { url } = server;

async function row(id: string) {
  const res = await db.pool.query<{ name: string; default_lease_seconds: number | null; queues: string[] }>(
    `SELECT name, default_lease_seconds, queues FROM endpoints WHERE id = $1`,
    [id],
  );
  return res.rows[0];
}

test('the owner edits name, lease and queues; a bad field is shown under its input and nothing is written', async () => {
  const alice = await person(db, server);
  const slug = alice.endpoint.slug;
  const card = await boardRequest(url, 'GET', `/endpoints/${slug}`, alice.cookie);
  assert.match(card.text, new RegExp(`href="/endpoints/${slug}/edit"`));
  const form = await boardRequest(url, 'GET', `/endpoints/${slug}/edit`, alice.cookie);
  assert.equal(form.status, 200);
  assert.match(form.text, new RegExp(`name="name" value="${alice.endpoint.name}"`));

  const bad = await boardRequest(url, 'POST', `/endpoints/${slug}/edit`, alice.cookie, {
    csrf: alice.csrf,
    name: 'Renamed',
    default_lease_seconds: '4',
    add_queues: 'triage',
  });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /data-error-for="default_lease_seconds"/);
  assert.match(
    bad.text,
    /id="edit-default_lease_seconds" name="default_lease_seconds" value="4"[^>]*aria-invalid="true"/,
  );
  assert.match(bad.text, /name="add_queues" value="triage"/, 'what was typed is kept');
  assert.deepEqual(await row(alice.endpoint.id), {
    name: alice.endpoint.name,
    default_lease_seconds: null,
    queues: ['inbox', 'ops'],
  });

  const badQueue = await boardRequest(url, 'POST', `/endpoints/${slug}/edit`, alice.cookie, {
    csrf: alice.csrf,
    name: 'Renamed',
    add_queues: 'Not A Queue',
  });
  assert.equal(badQueue.status, 400);
  assert.match(badQueue.text, /data-error-for="add_queues">add_queues: &quot;Not A Queue&quot; must match/);

  const ok = await boardRequest(url, 'POST', `/endpoints/${slug}/edit`, alice.cookie, {
    csrf: alice.csrf,
    name: 'Renamed',
    default_lease_seconds: '600',
    add_queues: 'triage, inbox, review',
  });
  assert.equal(ok.status, 303);
  assert.equal(ok.location, `/endpoints/${slug}`);
  assert.deepEqual(await row(alice.endpoint.id), {
    name: 'Renamed',
    default_lease_seconds: 600,
    queues: ['inbox', 'ops', 'triage', 'review'],
  });
  // An empty lease clears it back to the server's default.
  const cleared = await boardRequest(url, 'POST', `/endpoints/${slug}/edit`, alice.cookie, {
    csrf: alice.csrf,
    name: 'Renamed',
    default_lease_seconds: '',
  });
  assert.equal(cleared.status, 303);
  assert.equal((await row(alice.endpoint.id))?.default_lease_seconds, null);
});

test('a rotation shows the new credential once on the same slug; the old one works for the grace picked', async () => {
  const alice = await person(db, server);
  const slug = alice.endpoint.slug;
  const form = await boardRequest(url, 'GET', `/endpoints/${slug}/edit`, alice.cookie);
  assert.match(form.text, /<option value="3600" selected>1 hour \(the server’s default\)<\/option>/);

  const graced = await boardRequest(url, 'POST', `/endpoints/${slug}/rotate`, alice.cookie, {
    csrf: alice.csrf,
    grace_seconds: '300',
  });
  assert.equal(graced.status, 200);
  assert.match(graced.text, /has a new credential\. The old one keeps working until/);
  assert.match(graced.text, /shown <strong>only this once<\/strong>/);
  const second = /sbk_[A-Za-z0-9_-]+/.exec(graced.text)?.[0] ?? '';
  assert.notEqual(second, alice.credential);
  assert.match(graced.text, new RegExp(`"${slug}"`), 'the .mcp.json names the same server');
  assert.equal((await mcpStatus(url, second)).status, 400, 'the new credential works');
  assert.equal((await mcpStatus(url, alice.credential)).status, 400, 'the old one works in its grace');

  const now = await boardRequest(url, 'POST', `/endpoints/${slug}/rotate`, alice.cookie, {
    csrf: alice.csrf,
    grace_seconds: '0',
  });
  assert.equal(now.status, 200);
  assert.match(now.text, /The old one stopped working now\./);
  const third = /sbk_[A-Za-z0-9_-]+/.exec(now.text)?.[0] ?? '';
  assert.equal((await mcpStatus(url, third)).status, 400);
  assert.equal((await mcpStatus(url, second)).status, 401, 'no grace: refused at once');
  assert.equal((await mcpStatus(url, alice.credential)).status, 401, 'the first is long replaced');
  const slugNow = await db.pool.query(`SELECT slug FROM endpoints WHERE id = $1`, [alice.endpoint.id]);
  assert.equal(slugNow.rows[0]?.slug, slug);
});

test('another human, a revoked endpoint and a post without the CSRF token change nothing', async () => {
  const alice = await person(db, server);
  const bob = await person(db, server);
  const slug = alice.endpoint.slug;
  for (const [method, path, form] of [
    ['GET', `/endpoints/${slug}/edit`, undefined],
    ['POST', `/endpoints/${slug}/edit`, { csrf: bob.csrf, name: 'Mine now' }],
    ['POST', `/endpoints/${slug}/rotate`, { csrf: bob.csrf }],
  ] as const) {
    const res = await boardRequest(url, method, path, bob.cookie, form);
    assert.equal(res.status, 404, `${method} ${path}`);
  }
  const forged = await boardRequest(url, 'POST', `/endpoints/${slug}/rotate`, alice.cookie, { grace_seconds: '0' });
  assert.equal(forged.status, 403);
  assert.equal((await mcpStatus(url, alice.credential)).status, 400, 'still the same credential');

  const revoked = await boardRequest(url, 'POST', `/endpoints/${slug}/revoke`, alice.cookie, { csrf: alice.csrf });
  assert.equal(revoked.status, 303);
  const after = await boardRequest(url, 'GET', `/endpoints/${slug}/edit`, alice.cookie);
  assert.equal(after.status, 404);
  assert.equal((await row(alice.endpoint.id))?.name, alice.endpoint.name);
});

test('queues are removed with the form’s boxes; a queue with live work is refused under the boxes', async () => {
  const alice = await person(db, server);
  const slug = alice.endpoint.slug;
  const form = await boardRequest(url, 'GET', `/endpoints/${slug}/edit`, alice.cookie);
  assert.match(form.text, /name="remove_queues" value="ops"/);
  await db.pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, body, source, max_attempts, ready_at)
     VALUES ($1, 'td_board_removal', 'ops', 'live', '', 'api', 3, now())`,
    [alice.endpoint.id],
  );
  const refused = await boardRequest(url, 'POST', `/endpoints/${slug}/edit`, alice.cookie, {
    csrf: alice.csrf,
    name: alice.endpoint.name,
    remove_queues: 'ops',
  });
  assert.equal(refused.status, 409);
  assert.match(refused.text, /data-error-for="remove_queues">remove_queues: &quot;ops&quot; has 1 live todo/);
  assert.match(refused.text, /value="ops" checked/, 'the box stays ticked');
  assert.deepEqual((await row(alice.endpoint.id))?.queues, ['inbox', 'ops']);

  await db.pool.query(`UPDATE todos SET state = 'canceled', ready_at = NULL WHERE id = 'td_board_removal'`);
  const removed = await boardRequest(url, 'POST', `/endpoints/${slug}/edit`, alice.cookie, {
    csrf: alice.csrf,
    name: alice.endpoint.name,
    remove_queues: 'ops',
  });
  assert.equal(removed.status, 303);
  assert.deepEqual((await row(alice.endpoint.id))?.queues, ['inbox']);
});

test('a server grace the list does not offer is added to it and picked, never "none" by default', async () => {
  const other = await startOAuthServer(db, { SWITCHBOARD_CREDENTIAL_GRACE: '2h' });
  const alice = await person(db, other);
  const form = await boardRequest(other.url, 'GET', `/endpoints/${alice.endpoint.slug}/edit`, alice.cookie);
  assert.match(form.text, /<option value="7200" selected>7200 seconds \(the server’s default\)<\/option>/);
  assert.doesNotMatch(form.text, /<option value="0" selected>/);
});
