// Pins end to end that text from people and agents is text on the board: a todo title,
// an endpoint name and a webhook name carrying <script> and a quote that would close an
// attribute render escaped on every page that shows them, with no tag and no handler made.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { pushTodo } from '../../src/endpoints/todos.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { keyringOf } from '../../src/secrets/keyring.js';
import { testDatabase } from '../helpers/db.js';
import { PASSWORD, boardRequest, human, startBoard } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_hostile_text');
const { url } = await startBoard(db, 250, {}, { keyring: keyringOf(randomBytes(32)) });
const deps = { db: db.pool, publicUrl: 'http://switchboard.test', defaultLeaseSeconds: 300 };

/** Closes a double- or single-quoted attribute, adds a handler, and opens a script. */
const hostile = (what: string) => `${what}<script>alert(1)</script>" onmouseover="alert(2)' onfocus='alert(3)`;
const escaped = (what: string) =>
  `${what}&lt;script&gt;alert(1)&lt;/script&gt;&quot; onmouseover=&quot;alert(2)&#39; onfocus=&#39;alert(3)`;

test('a hostile todo title, endpoint name and webhook name render escaped on their pages', async () => {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const cookie = `sb_session=${session.cookie}`;
  const { endpoint } = await vendEndpoint(deps, who.id, { name: hostile('ep'), queues: ['inbox'] }, new Date());
  const { todo } = await pushTodo(deps, who.id, endpoint.slug, { queue: 'inbox', title: hostile('todo') }, new Date());
  const added = await boardRequest(url, 'POST', `/endpoints/${endpoint.slug}/webhooks`, cookie, {
    csrf: session.csrf,
    provider: 'token',
    queue: 'inbox',
    name: hostile('hook'),
  });
  assert.equal(added.status, 201, added.text);

  const pages: Array<[string, string[]]> = [
    ['/', ['ep', 'todo']],
    ['/endpoints', ['ep']],
    [`/endpoints/${endpoint.slug}`, ['ep']],
    [`/endpoints/${endpoint.slug}/edit`, ['ep']],
    [`/todos/${todo.id}`, ['todo']],
    ['/todos', ['todo']],
    [`/endpoints/${endpoint.slug}/webhooks`, ['hook']],
  ];
  for (const [path, shown] of pages) {
    const { status, text } = await boardRequest(url, 'GET', path, cookie);
    assert.equal(status, 200, path);
    assert.doesNotMatch(text, /<script>alert/, `${path}: no script tag made`);
    assert.doesNotMatch(text, /\son(mouseover|focus)=["']/, `${path}: no handler attribute made`);
    for (const what of shown) assert.ok(text.includes(escaped(what)), `${path} shows the ${what} text, escaped`);
  }
  assert.ok(added.text.includes(escaped('hook')), 'the answer that made the webhook shows its name escaped');
});
