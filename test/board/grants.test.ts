// Pins the board's grants page (docs/board.md "Grants"): a grant between two of one's own
// endpoints is active at once; one to another owner's endpoint is a request that owner
// sees with Approve and Deny and the requester with Withdraw; approving answers 303 to the
// list with a notice; a second approve is a 409 saying so; another human's grant is 404;
// a refused request keeps what was typed with the message; slugs and queue names are
// escaped; the drawer shows a handed todo's lineage.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { createOrHandOff, DEFAULT_HANDOFF } from '../../src/grants/handoff.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { depsOf } from '../helpers/fixtures.js';
import { testDatabase } from '../helpers/db.js';
import { PASSWORD, boardRequest, human, startBoard } from './harness.js';

const db = await testDatabase('board_grants');
const { url } = await startBoard(db);
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };

async function person(...names: string[]) {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const slugs: string[] = [];
  for (const name of names) {
    const { endpoint } = await vendEndpoint(deps, who.id, { name, queues: ['inbox', 'ops'] }, new Date());
    slugs.push(endpoint.slug);
  }
  return { who, cookie: `sb_session=${session.cookie}`, csrf: session.csrf, slugs };
}
type Person = Awaited<ReturnType<typeof person>>;

const get = (p: Person, path: string) => boardRequest(url, 'GET', path, p.cookie);
const post = (p: Person, path: string, form: Record<string, string> = {}) =>
  boardRequest(url, 'POST', path, p.cookie, { ...form, csrf: p.csrf });

const grantIdOf = (location: string | null) => /grant=(gr_\w+)/.exec(location ?? '')?.[1] ?? '';

test('one owner: granted at once; across owners: requested, approved by the target owner, then revoked', async () => {
  const alice = await person('planner', 'coder');
  const bob = await person('reviewer');
  const [planner, coder] = alice.slugs as [string, string];
  const [reviewer] = bob.slugs as [string];

  const own = await post(alice, '/grants', { from: planner, to: coder, queues: 'inbox, ops' });
  assert.equal(own.status, 303, own.text);
  assert.match(own.location ?? '', /done=created/);
  const list = await get(alice, own.location ?? '/grants');
  assert.match(list.text, /data-done="created"/);
  assert.match(list.text, new RegExp(`data-grant="${grantIdOf(own.location)}"[^]*?inbox, ops[^]*?active`));

  const asked = await post(alice, '/grants', { from: coder, to: reviewer, queues: 'inbox' });
  assert.match(asked.location ?? '', /done=requested/);
  const id = grantIdOf(asked.location);
  const mine = await get(alice, '/grants');
  const row = (text: string) => new RegExp(`<tr data-grant="${id}"[^]*?</tr>`).exec(text)?.[0] ?? '';
  assert.match(row(mine.text), /data-action="revoke">Withdraw/);
  assert.doesNotMatch(row(mine.text), /data-action="approve"/);
  const theirs = await get(bob, '/grants');
  assert.match(row(theirs.text), /data-direction="in"/);
  assert.match(row(theirs.text), /data-action="approve"[^]*data-action="deny"/);

  const approved = await post(bob, `/grants/${id}/approve`);
  assert.equal(approved.status, 303);
  assert.match((await get(bob, approved.location ?? '')).text, /data-done="approve"/);
  const again = await post(bob, `/grants/${id}/approve`);
  assert.equal(again.status, 409);
  assert.match(again.text, /the grant is active/);

  const outsider = await person();
  assert.equal((await post(outsider, `/grants/${id}/revoke`)).status, 404);
  assert.equal((await post(alice, `/grants/${id}/revoke`)).status, 303);
  assert.match(row((await get(bob, '/grants')).text), /revoked/);
});

test('a refused request keeps what was typed and names the problem; typed text is escaped', async () => {
  const alice = await person('solo');
  const refused = await post(alice, '/grants', { from: alice.slugs[0]!, to: '<b>x</b>', queues: 'inbox' });
  assert.equal(refused.status, 400);
  assert.match(refused.text, /to: must be an endpoint slug/);
  assert.match(refused.text, /value="&lt;b&gt;x&lt;\/b&gt;"/);
  assert.doesNotMatch(refused.text, /<b>x<\/b>/);
  const unknown = await post(alice, '/grants', { from: alice.slugs[0]!, to: 'no-such-agent-zz', queues: 'inbox' });
  assert.equal(unknown.status, 400);
  assert.match(unknown.text, /to: endpoint no-such-agent-zz not found/);
});

test('a handed todo shows its lineage on its page, both ways', async () => {
  const alice = await person('from', 'to');
  const [fromSlug, toSlug] = alice.slugs as [string, string];
  assert.equal((await post(alice, '/grants', { from: fromSlug, to: toSlug, queues: 'ops' })).status, 303);
  const ids = await db.pool.query<{ id: string; slug: string }>(
    'SELECT id, slug FROM endpoints WHERE slug = ANY($1::text[])',
    [[fromSlug, toSlug]],
  );
  const fromId = ids.rows.find((r) => r.slug === fromSlug)!.id;
  const caller = {
    endpointId: fromId,
    sessionId: 's-1',
    queues: ['inbox', 'ops'],
    defaultLeaseSeconds: null,
    endpointSlug: fromSlug,
  };
  const todos = depsOf(db.pool);
  const parent = await createOrHandOff(todos, DEFAULT_HANDOFF, caller, { queue: 'inbox', title: 'parent' });
  const child = await createOrHandOff(todos, DEFAULT_HANDOFF, caller, {
    endpoint: toSlug,
    queue: 'ops',
    title: 'child <i>x</i>',
    parent_id: parent.todo.id,
    reply: true,
  });
  const childPage = await get(alice, `/todos/${child.todo.id}`);
  assert.match(
    childPage.text,
    new RegExp(
      `data-field="parent">Handed from <code>${parent.todo.id}</code> on <code>${fromSlug}</code> \\(depth 1, replies when it ends\\)`,
    ),
  );
  const parentPage = await get(alice, `/todos/${parent.todo.id}`);
  assert.match(parentPage.text, new RegExp(`data-child="${child.todo.id}"`));
  assert.match(parentPage.text, /child &lt;i&gt;x&lt;\/i&gt;/);
});

test('the endpoints page links the grants page', async () => {
  const alice = await person('linked');
  assert.match((await get(alice, '/endpoints')).text, /href="\/grants"/);
});
