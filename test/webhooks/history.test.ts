// Pins the event history and what surrounds it: list and show scoped to the owner, replay as a new linked event, signing-secret rotation with its grace, racing redeliveries making one todo, and an event and its todo committing together or not at all.

import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { apiHarness, expectError, expectStatus, idsOf, makePeople, vend, PUBLIC_URL, type Reply } from '../api/app.js';
import * as send from './senders.js';

const h = await apiHarness('webhook_history');
const { member, other } = await makePeople(h);
beforeEach(() => h.fresh());
const { endpoint } = await vend(h, member, { name: 'history', queues: ['inbox'] });

async function makeGithub(): Promise<{ id: string; url: string; secret: string }> {
  const res = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'inbox', provider: 'github', name: 'octo-org' },
  });
  expectStatus(res, 201);
  return { id: res.body.webhook.id, url: res.body.url, secret: res.body.secret };
}

function deliver(url: string, signed: send.Signed): Promise<Reply> {
  return h.post(url.slice(PUBLIC_URL.length), { payload: signed.raw, headers: signed.headers });
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const res = await h.pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${sql}`, params);
  return res.rows[0]?.n ?? 0;
}

test('the list answers the endpoint’s events newest first with the contract’s fields; show adds headers, payload and trace', async () => {
  const { url, secret } = await makeGithub();
  const raw = await send.fixture('github-pull_request.json');
  const first = await deliver(url, await send.github(secret, 'pull_request', raw, 'list-1'));
  const second = await deliver(url, await send.github(secret, 'issues', await send.fixture('github-issues.json')));
  expectStatus(first, 201);
  expectStatus(second, 201);
  const list = await h.get(`/api/v1/endpoints/${endpoint.slug}/events?limit=1`, { token: member.token });
  expectStatus(list, 200);
  assert.equal(list.body.events.length, 1);
  const [newest] = list.body.events;
  assert.equal(newest.id, second.body.event_id);
  for (const key of [
    'id',
    'provider',
    'type',
    'actor',
    'delivery_id',
    'verified',
    'disposition',
    'todo_ids',
    'received_at',
  ])
    assert.ok(key in newest, key);
  assert.ok(!('payload' in newest), 'the list carries no payload');
  const all = await h.get(`/api/v1/endpoints/${endpoint.id}/events`, { token: member.token });
  assert.deepEqual(idsOf(all.body.events).slice(0, 2), [second.body.event_id, first.body.event_id]);

  const shown = await h.get(`/api/v1/events/${first.body.event_id}`, { token: member.token });
  expectStatus(shown, 200);
  assert.equal(shown.body.event.type, 'pull_request.opened');
  assert.equal(shown.body.event.delivery_id, 'list-1');
  assert.equal(shown.body.event.headers['x-github-event'], 'pull_request');
  assert.equal(shown.body.event.headers['x-hub-signature-256'], undefined);
  assert.deepEqual(shown.body.event.payload, JSON.parse(raw));
  assert.ok(Array.isArray(shown.body.event.trace));
  expectError(
    await h.get(`/api/v1/endpoints/${endpoint.slug}/events?limit=0`, { token: member.token }),
    400,
    'invalid_argument',
    'limit',
  );
});

test('another human sees neither the list nor an event, and cannot replay it: 404 like an unknown id', async () => {
  const { url, secret } = await makeGithub();
  const made = await deliver(
    url,
    await send.github(secret, 'pull_request', await send.fixture('github-pull_request.json')),
  );
  expectError(await h.get(`/api/v1/endpoints/${endpoint.slug}/events`, { token: other.token }), 404, 'not_found');
  expectError(await h.get(`/api/v1/events/${made.body.event_id}`, { token: other.token }), 404, 'not_found');
  expectError(await h.post(`/api/v1/events/${made.body.event_id}/replay`, { token: other.token }), 404, 'not_found');
  expectError(await h.get('/api/v1/events/ev_unknown', { token: member.token }), 404, 'not_found');
});

test('replay makes the todo again from the stored delivery, as a new event linked to the original', async () => {
  const { url, secret } = await makeGithub();
  const first = await deliver(
    url,
    await send.github(secret, 'pull_request', await send.fixture('github-pull_request.json')),
  );
  expectStatus(first, 201);
  const replay = await h.post(`/api/v1/events/${first.body.event_id}/replay`, { token: member.token });
  expectStatus(replay, 201);
  assert.equal(replay.body.event.replay_of, first.body.event_id);
  assert.notEqual(replay.body.event.id, first.body.event_id);
  assert.equal(replay.body.todos.length, 1);
  assert.notEqual(replay.body.todos[0].id, first.body.todos[0].id);
  assert.deepEqual(replay.body.event.todo_ids, [replay.body.todos[0].id]);
  const made = await h.get(`/api/v1/todos/${replay.body.todos[0].id}`, { token: member.token });
  assert.equal(made.body.todo.kind, 'pull_request.opened');
  assert.equal(made.body.todo.title, 'octo-org/hello-world#42: Fix the flaky retry test (opened by alice)');
  assert.equal(made.body.todo.event_id, replay.body.event.id);
  const again = await h.post(`/api/v1/events/${first.body.event_id}/replay`, { token: member.token });
  expectStatus(again, 201, 'a replay is never a duplicate');
  const original = await h.get(`/api/v1/events/${first.body.event_id}`, { token: member.token });
  assert.deepEqual(original.body.event.todo_ids, [first.body.todos[0].id], 'the original is unchanged');
});

test('a replaced secret keeps verifying through the grace and stops after it; set-secret {} generates one shown once', async () => {
  const { id, url, secret: old } = await makeGithub();
  const rotated = await h.post(`/api/v1/webhooks/${id}/secret`, { token: member.token, body: {} });
  expectStatus(rotated, 200);
  const fresh = rotated.body.secret as string;
  assert.match(fresh, /^whsec_/);
  assert.notEqual(fresh, old);
  assert.ok(rotated.body.previous_valid_until, 'the grace is said');
  const raw = await send.fixture('github-issues.json');
  expectStatus(await deliver(url, await send.github(old, 'issues', raw)), 201, 'old secret in grace');
  expectStatus(await deliver(url, await send.github(fresh, 'issues', raw)), 201, 'new secret');
  await h.pool.query(`UPDATE webhooks SET prev_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [id]);
  const late = await deliver(url, await send.github(old, 'issues', raw));
  expectError(late, 401, 'unauthenticated');
  expectStatus(await deliver(url, await send.github(fresh, 'issues', raw)), 201);

  const token = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'inbox' },
  });
  expectError(
    await h.post(`/api/v1/webhooks/${token.body.webhook.id}/secret`, {
      token: member.token,
      body: { secret: 'x'.repeat(20) },
    }),
    400,
    'invalid_argument',
    'secret',
  );
  expectError(await h.post(`/api/v1/webhooks/${id}/secret`, { token: other.token, body: {} }), 404, 'not_found');
  expectError(
    await h.post(`/api/v1/webhooks/${id}/secret`, { token: member.token, body: { secret: 'short' } }),
    400,
    'invalid_argument',
    'secret',
  );
});

test('the same delivery posted 16 times at once makes exactly one todo and one event', async () => {
  const { url, secret } = await makeGithub();
  const signed = await send.github(secret, 'pull_request', await send.fixture('github-pull_request.json'), 'race-16');
  const answers = await Promise.all(Array.from({ length: 16 }, () => deliver(url, signed)));
  const created = answers.filter((a) => a.status === 201);
  assert.equal(created.length, 1, answers.map((a) => `${a.status} ${a.text}`).join('\n'));
  for (const a of answers) {
    assert.equal(a.body.todos[0].id, created[0]?.body.todos[0].id);
    assert.equal(a.body.event_id, created[0]?.body.event_id);
    if (a.status === 200) assert.equal(a.body.duplicate, true);
  }
  assert.equal(await count(`webhook_events WHERE delivery_id = $1`, ['race-16']), 1);
  assert.equal(
    await count(`todos WHERE endpoint_id = $1 AND event_id = $2`, [endpoint.id, created[0]?.body.event_id]),
    1,
  );
});

test('a backend killed mid-transaction leaves neither the event nor its todo', async () => {
  const { url, secret } = await makeGithub();
  // Holds the delivery's transaction inside its event insert, after its todo insert.
  await h.pool.query(`CREATE FUNCTION hold_event() RETURNS trigger LANGUAGE plpgsql AS
    $$ BEGIN PERFORM pg_sleep(20); RETURN NEW; END $$`);
  await h.pool.query(
    `CREATE TRIGGER hold_event BEFORE INSERT ON webhook_events FOR EACH ROW EXECUTE FUNCTION hold_event()`,
  );
  try {
    const before = await count('todos WHERE endpoint_id = $1', [endpoint.id]);
    const signed = await send.github(
      secret,
      'pull_request',
      await send.fixture('github-pull_request.json'),
      'killed-1',
    );
    const pending = deliver(url, signed);
    let killed = false;
    for (let i = 0; i < 200 && !killed; i++) {
      const res = await h.pool.query<{ pid: number }>(
        `SELECT pid FROM pg_stat_activity WHERE wait_event = 'PgSleep' AND query LIKE '%INSERT INTO webhook_events%'`,
      );
      for (const { pid } of res.rows) {
        await h.pool.query('SELECT pg_terminate_backend($1)', [pid]);
        killed = true;
      }
      if (!killed) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(killed, 'the delivery reached its event insert');
    const answer = await pending;
    assert.ok(answer.status >= 500, `${answer.status} ${answer.text}`);
    assert.equal(await count('todos WHERE endpoint_id = $1', [endpoint.id]), before, 'no todo');
    assert.equal(await count(`webhook_events WHERE delivery_id = $1`, ['killed-1']), 0, 'no event');
    assert.equal(await count(`webhook_deliveries WHERE delivery_id = $1`, ['killed-1']), 0, 'no dedup id');
  } finally {
    await h.pool.query('DROP TRIGGER hold_event ON webhook_events');
    await h.pool.query('DROP FUNCTION hold_event()');
  }
  const retried = await deliver(
    url,
    await send.github(secret, 'pull_request', await send.fixture('github-pull_request.json'), 'killed-1'),
  );
  expectStatus(retried, 201, 'the sender’s retry is a new delivery, not a duplicate');
});
