// Pins the board's bulk buttons over real HTTP without JavaScript: each queue header has
// "Retry all failed" and "Cancel all pending"; the button's page confirms with a dry-run
// count and changes nothing; only its CSRF-guarded post acts; another human's endpoint
// is 404.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { vendEndpoint } from '../../src/endpoints/manage.js';
import { signIn } from '../../src/identity/board-sessions.js';
import { testDatabase } from '../helpers/db.js';
import { PASSWORD, human, startBoard, boardRequest } from './harness.js';

// Top level, not in a hook: each registers the file's own `after` clean-up.
const db = await testDatabase('board_bulk');
const { url } = await startBoard(db);
const deps = { db: db.pool, publicUrl: 'http://switchboard.test' };

async function person() {
  const who = await human(db);
  const session = await signIn(deps, who.email, PASSWORD);
  const { endpoint } = await vendEndpoint(deps, who.id, { name: 'Bulk', queues: ['inbox', 'later'] }, new Date());
  return { cookie: `sb_session=${session.cookie}`, csrf: session.csrf, endpoint };
}

const request = (method: 'GET' | 'POST', path: string, cookie: string, form?: Record<string, string>) =>
  boardRequest(url, method, path, cookie, form);

async function seed(endpointId: string, queue: string, state: string, n: number, tag: string): Promise<void> {
  await db.pool.query(
    `INSERT INTO todos (endpoint_id, id, queue, title, state, ready_at)
     SELECT $1, 'td_' || $5 || lpad(g::text, 6, '0'), $2, 'seeded ' || g, $3, CASE WHEN $3 = 'pending' THEN now() END
       FROM generate_series(1, $4::int) g`,
    [endpointId, queue, state, n, tag],
  );
}

const stateCounts = async (endpointId: string, queue: string) =>
  Object.fromEntries(
    (
      await db.pool.query<{ state: string; n: number }>(
        `SELECT state, count(*)::int AS n FROM todos WHERE endpoint_id = $1 AND queue = $2 GROUP BY state`,
        [endpointId, queue],
      )
    ).rows.map((r) => [r.state, r.n]),
  );

test('"Cancel all pending" confirms with the dry-run count, and only the confirmed post cancels', async () => {
  const p = await person();
  await seed(p.endpoint.id, 'inbox', 'pending', 4, `${p.endpoint.id.slice(-6)}a`);
  await seed(p.endpoint.id, 'inbox', 'failed', 2, `${p.endpoint.id.slice(-6)}b`);
  await seed(p.endpoint.id, 'later', 'pending', 1, `${p.endpoint.id.slice(-6)}c`);

  const home = await request('GET', '/', p.cookie);
  assert.equal(home.status, 200);
  assert.match(home.text, /<form method="get" action="\/bulk"[^>]*>.*name="queue" value="inbox"/s);
  assert.match(home.text, /Retry all failed/);
  assert.match(home.text, /Cancel all pending/);

  const confirm = await request('GET', `/bulk?endpoint=${p.endpoint.slug}&queue=inbox&action=cancel`, p.cookie);
  assert.equal(confirm.status, 200, confirm.text);
  assert.match(confirm.text, /data-matched="4"/);
  assert.match(confirm.text, /Cancel 4 todo\(s\)/);
  assert.deepEqual(
    await stateCounts(p.endpoint.id, 'inbox'),
    { pending: 4, failed: 2 },
    'the confirmation changed nothing',
  );

  const form = { action: 'cancel', endpoint: p.endpoint.slug, queue: 'inbox' };
  const forged = await request('POST', '/bulk', p.cookie, { ...form, csrf: 'wrong' });
  assert.equal(forged.status, 403);
  assert.deepEqual(await stateCounts(p.endpoint.id, 'inbox'), { pending: 4, failed: 2 });

  const done = await request('POST', '/bulk', p.cookie, { ...form, csrf: p.csrf });
  assert.equal(done.status, 200, done.text);
  assert.match(done.text, /data-changed="4"/);
  assert.deepEqual(await stateCounts(p.endpoint.id, 'inbox'), { canceled: 4, failed: 2 });
  assert.deepEqual(await stateCounts(p.endpoint.id, 'later'), { pending: 1 }, 'another queue is untouched');
});

test('"Retry all failed" retries the failed todos of the queue, and an empty queue says there is nothing to do', async () => {
  const p = await person();
  await seed(p.endpoint.id, 'later', 'failed', 3, `${p.endpoint.id.slice(-6)}d`);
  const confirm = await request('GET', `/bulk?endpoint=${p.endpoint.slug}&queue=later&action=retry`, p.cookie);
  assert.match(confirm.text, /3 failed todo\(s\)/);
  const done = await request('POST', '/bulk', p.cookie, {
    action: 'retry',
    endpoint: p.endpoint.slug,
    queue: 'later',
    csrf: p.csrf,
  });
  assert.match(done.text, /data-changed="3"/);
  assert.deepEqual(await stateCounts(p.endpoint.id, 'later'), { pending: 3 });
  const empty = await request('GET', `/bulk?endpoint=${p.endpoint.slug}&queue=inbox&action=retry`, p.cookie);
  assert.match(empty.text, /nothing to do/);
  assert.doesNotMatch(empty.text, /method="post" action="\/bulk"/);
});

test("another human's endpoint answers 404 on the confirmation and the post, with nothing changed", async () => {
  const owner = await person();
  const stranger = await person();
  await seed(owner.endpoint.id, 'inbox', 'pending', 2, `${owner.endpoint.id.slice(-6)}e`);
  const look = await request('GET', `/bulk?endpoint=${owner.endpoint.slug}&queue=inbox&action=cancel`, stranger.cookie);
  assert.equal(look.status, 404);
  const act = await request('POST', '/bulk', stranger.cookie, {
    action: 'cancel',
    endpoint: owner.endpoint.slug,
    queue: 'inbox',
    csrf: stranger.csrf,
  });
  assert.equal(act.status, 404);
  assert.deepEqual(await stateCounts(owner.endpoint.id, 'inbox'), { pending: 2 });
});
