// Pins the board with SWITCHBOARD_AUTH=off: every page is the synthetic admin's without
// signing in, and forms still need a CSRF token (a double-submit cookie), so a page on
// another site cannot act on a loopback server through the browser.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { NotifyBus } from '../../src/db/bus.js';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { localAdmin } from '../../src/identity/setup.js';
import { testDatabase } from '../helpers/db.js';
import { startApp } from '../mcp/harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_auth_off');
const admin = await localAdmin({ db: db.pool, publicUrl: 'http://switchboard.test' });
const bus = new NotifyBus({ url: db.url });
await bus.start();
after(() => bus.stop());
const { url } = await startApp(db.pool, 'board-auth-off', bus, { syntheticAdmin: admin });
const { endpoint } = await vendEndpoint(
  { db: db.pool, publicUrl: 'http://switchboard.test' },
  admin.human.id,
  { name: 'Local agent' },
  new Date(),
);

const todos = async () => Number((await db.pool.query('SELECT count(*) FROM todos')).rows[0].count);

async function push(headers: Record<string, string>, form: Record<string, string>) {
  const res = await fetch(`${url}/todos`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams({ target: `${endpoint.slug}/inbox`, title: 'local', ...form }).toString(),
    redirect: 'manual',
  });
  await res.text();
  return res.status;
}

test('with auth off the board opens as the local admin and its forms still need the CSRF cookie and field', async () => {
  const home = await fetch(`${url}/`, { redirect: 'manual' });
  assert.equal(home.status, 200);
  const text = await home.text();
  assert.match(text, /admin@localhost/);
  assert.match(text, /Local agent/);
  const cookie = /sb_local_csrf=([^;]+)/.exec(home.headers.get('set-cookie') ?? '')?.[1] ?? '';
  const csrf = /name="csrf" value="([^"]+)"/.exec(text)?.[1] ?? '';
  assert.ok(cookie && cookie === csrf, 'the form token is the cookie token');

  assert.equal(await push({}, {}), 403, 'no cookie, no field');
  assert.equal(await push({}, { csrf }), 403, 'a field without its cookie (a cross-site post)');
  assert.equal(await push({ cookie: `sb_local_csrf=${cookie}` }, { csrf: 'guess' }), 403, 'a wrong field');
  assert.equal(await todos(), 0);
  assert.equal(await push({ cookie: `sb_local_csrf=${cookie}` }, { csrf }), 303);
  assert.equal(await todos(), 1);

  const stream = await fetch(`${url}/board/events?view=queues`);
  assert.equal(stream.status, 200);
  await stream.body?.cancel();
});
