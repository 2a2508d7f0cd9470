// Pins the install-wide message queue capacity (docs/design/message-queue.md, scenarios
// 18–22, 15 over REST): environment > persisted setting > default 10 with its
// normalisation and lock, reads by any signed-in human and writes by admins (and the
// synthetic admin with auth off), persist-before-apply (a failed write changes nothing
// live), the very next admission on another instance obeying a save, a corrupt persisted
// value after a restart, and two admins saving at once on two instances ending with
// persisted = live = the last write.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseConfig } from '../../src/config/index.js';
import { localAdmin } from '../../src/identity/setup.js';
import { CapacitySetting } from '../../src/messages/capacity.js';
import { expectError, expectStatus, login, makePeople, PUBLIC_URL, vend } from '../api/app.js';
import { testDatabase } from '../helpers/db.js';
import { barrier } from '../helpers/fixtures.js';
import { instance } from './api.js';
import { session, stored } from './world.js';

const { pool, url } = await testDatabase('messages_settings');
const a = await instance(pool, url);
const b = await instance(pool, url);
const people = await makePeople(a);
const PATH = '/api/v1/settings/message-queue';

async function persisted(): Promise<unknown> {
  return (await pool.query(`SELECT value FROM settings WHERE key = 'message_queue'`)).rows[0]?.value ?? null;
}

test('the environment value: parsed, non-positive as 0 (unlimited), invalid logged and ignored, Kandev name too', () => {
  const cases: Array<[Record<string, string>, number | null, number]> = [
    [{}, null, 0],
    [{ SWITCHBOARD_QUEUE_MAX_PER_SESSION: '50' }, 50, 0],
    [{ SWITCHBOARD_QUEUE_MAX_PER_SESSION: '-3' }, 0, 0],
    [{ SWITCHBOARD_QUEUE_MAX_PER_SESSION: '0' }, 0, 0],
    [{ SWITCHBOARD_QUEUE_MAX_PER_SESSION: 'many' }, null, 1],
    [{ KANDEV_QUEUE_MAX_PER_SESSION: '50' }, 50, 0],
    [{ SWITCHBOARD_QUEUE_MAX_PER_SESSION: 'many', KANDEV_QUEUE_MAX_PER_SESSION: '7' }, 7, 1],
    [{ SWITCHBOARD_QUEUE_MAX_PER_SESSION: '12', KANDEV_QUEUE_MAX_PER_SESSION: '7' }, 12, 0],
  ];
  for (const [env, capacity, warnings] of cases) {
    const parsed = parseConfig(env);
    assert.ok(parsed.ok, JSON.stringify(env));
    assert.equal(parsed.config.messages.envCapacity, capacity, JSON.stringify(env));
    assert.equal(parsed.config.messages.warnings.length, warnings, JSON.stringify(env));
    if (warnings) assert.match(parsed.config.messages.warnings[0] ?? '', /QUEUE_MAX_PER_SESSION: "many"/);
  }
  const ack = parseConfig({ SWITCHBOARD_MESSAGE_ACK_TIMEOUT: 'soon' });
  assert.ok(!ack.ok && ack.problems.some((p) => p.startsWith('SWITCHBOARD_MESSAGE_ACK_TIMEOUT')));
  const dflt = parseConfig({});
  assert.ok(dflt.ok && dflt.config.messages.ackTimeoutMs === 600_000);
});

test('with nothing saved GET says default 10; a member reads (200) but cannot write (403)', async () => {
  const res = await a.get(PATH, { token: people.member.token });
  expectStatus(res, 200);
  assert.deepEqual(res.body, {
    settings: { max_per_session: null },
    effective: { max_per_session: 10, source: 'default', locked: false },
  });
  expectError(
    await a.request('PATCH', PATH, { token: people.member.token, body: { max_per_session: 5 } }),
    403,
    'forbidden',
  );
  assert.equal(await persisted(), null);
});

test('an admin PATCH of -1 is 400 naming max_per_session and changes nothing', async () => {
  for (const body of [{ max_per_session: -1 }, { max_per_session: 2.5 }, { max_per_session: '5' }, { other: 1 }]) {
    const res = await a.request('PATCH', PATH, { token: people.admin.token, body });
    expectError(res, 400, 'invalid_argument', Object.keys(body)[0]);
  }
  assert.equal(await persisted(), null);
});

test('after a PATCH to 25 the very next add on another instance obeys 25, and every instance shows it', async () => {
  const res = await a.request('PATCH', PATH, { token: people.admin.token, body: { max_per_session: 25 } });
  expectStatus(res, 200);
  assert.equal(res.body.effective.max_per_session, 25);
  assert.equal(res.body.effective.source, 'setting');
  const { endpoint } = await vend(a, people.member);
  const sessionId = await session(pool, endpoint.id);
  for (let i = 0; i < 25; i++) {
    expectStatus(
      await b.post(`/api/v1/sessions/${sessionId}/queue`, { token: people.member.token, body: { content: `m${i}` } }),
      201,
    );
  }
  const full = await b.post(`/api/v1/sessions/${sessionId}/queue`, {
    token: people.member.token,
    body: { content: 'x' },
  });
  expectError(full, 409, 'queue_full');
  assert.deepEqual(full.body.error.details, { queue_size: 25, reserved: 0, max: 25 });
  const onB = await b.get(PATH, { token: people.member.token });
  assert.equal(onB.body.effective.max_per_session, 25);
  assert.equal((await b.get(`/api/v1/sessions/${sessionId}/queue`, { token: people.member.token })).body.max, 25);
});

test('if persisting fails the API answers 500 and the live value is unchanged', async () => {
  const before = (await a.get(PATH, { token: people.admin.token })).body;
  await pool.query('ALTER TABLE settings RENAME TO settings_away');
  try {
    const res = await a.request('PATCH', PATH, { token: people.admin.token, body: { max_per_session: 3 } });
    expectError(res, 500, 'internal');
  } finally {
    await pool.query('ALTER TABLE settings_away RENAME TO settings');
  }
  assert.deepEqual((await a.get(PATH, { token: people.admin.token })).body, before);
  assert.deepEqual(await persisted(), { max_per_session: 25 });
});

test('a valid environment value locks the setting: GET says environment, PATCH naming it is 409, nothing moves', async () => {
  await pool.query(`UPDATE settings SET value = '{"max_per_session": 20}' WHERE key = 'message_queue'`);
  for (const env of [{ SWITCHBOARD_QUEUE_MAX_PER_SESSION: '50' }, { KANDEV_QUEUE_MAX_PER_SESSION: '50' }]) {
    const parsed = parseConfig(env);
    assert.ok(parsed.ok);
    const locked = await instance(pool, url, { envCapacity: parsed.config.messages.envCapacity });
    const res = await locked.get(PATH, { token: people.member.token });
    assert.deepEqual(res.body, {
      settings: { max_per_session: 20 },
      effective: { max_per_session: 50, source: 'environment', locked: true },
    });
    const refused = await locked.request('PATCH', PATH, { token: people.admin.token, body: { max_per_session: 30 } });
    expectError(refused, 409, 'conflict', 'max_per_session');
    expectStatus(await locked.request('PATCH', PATH, { token: people.admin.token, body: {} }), 200);
    assert.deepEqual(await persisted(), { max_per_session: 20 });
    assert.equal((await locked.get(PATH, { token: people.admin.token })).body.effective.max_per_session, 50);
  }
  for (const text of ['-3', '0']) {
    const parsed = parseConfig({ SWITCHBOARD_QUEUE_MAX_PER_SESSION: text });
    assert.ok(parsed.ok);
    const unlimited = await instance(pool, url, { envCapacity: parsed.config.messages.envCapacity });
    const res = await unlimited.get(PATH, { token: people.member.token });
    assert.equal(res.body.effective.max_per_session, 0);
    assert.equal(res.body.effective.source, 'environment');
    assert.equal(res.body.effective.locked, true);
  }
});

test('an invalid environment value leaves the persisted setting, or else the default, in charge', async () => {
  const parsed = parseConfig({ SWITCHBOARD_QUEUE_MAX_PER_SESSION: 'many' });
  assert.ok(parsed.ok);
  const h = await instance(pool, url, { envCapacity: parsed.config.messages.envCapacity });
  const withSetting = (await h.get(PATH, { token: people.member.token })).body;
  assert.deepEqual(
    [withSetting.effective.max_per_session, withSetting.effective.source, withSetting.effective.locked],
    [20, 'setting', false],
  );
  await pool.query(`DELETE FROM settings`);
  const fresh = await instance(pool, url, { envCapacity: parsed.config.messages.envCapacity });
  const body = (await fresh.get(PATH, { token: people.member.token })).body;
  assert.deepEqual(
    [body.effective.max_per_session, body.effective.source, body.effective.locked],
    [10, 'default', false],
  );
});

test('after a restart a corrupt persisted value gives 10 and a warning, and an admin PATCH replaces it', async () => {
  await pool.query(
    `INSERT INTO settings (key, value) VALUES ('message_queue', '{"max_per_session": "lots"}')
     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, version = settings.version + 1`,
  );
  const warnings: string[] = [];
  const restarted = await instance(pool, url, { warnings });
  const body = (await restarted.get(PATH, { token: people.member.token })).body;
  assert.deepEqual(
    [body.settings.max_per_session, body.effective.max_per_session, body.effective.source],
    [null, 10, 'default'],
  );
  assert.equal(warnings.length, 1);
  assert.match(warnings[0] ?? '', /not a whole number/);
  const fixed = await restarted.request('PATCH', PATH, { token: people.admin.token, body: { max_per_session: 12 } });
  assert.equal(fixed.body.effective.max_per_session, 12);
  assert.deepEqual(await persisted(), { max_per_session: 12 });
  const direct = new CapacitySetting({ db: pool, envCapacity: null });
  assert.equal((await direct.snapshot()).effective, 12, 'resolved before the first admission');
});

test('10 rows and the capacity lowered to 3 over the API: all stay, adds refused until 2 remain', async () => {
  const { endpoint } = await vend(a, people.member);
  const sessionId = await session(pool, endpoint.id);
  const queue = `/api/v1/sessions/${sessionId}/queue`;
  expectStatus(await a.request('PATCH', PATH, { token: people.admin.token, body: { max_per_session: 0 } }), 200);
  const ids: string[] = [];
  for (let i = 0; i < 10; i++)
    ids.push((await a.post(queue, { token: people.member.token, body: { content: `m${i}` } })).body.id);
  expectStatus(await a.request('PATCH', PATH, { token: people.admin.token, body: { max_per_session: 3 } }), 200);
  const status = (await a.get(queue, { token: people.member.token })).body;
  assert.deepEqual([status.count, status.max], [10, 3]);
  for (const id of ids.slice(0, 8)) {
    expectError(await a.post(queue, { token: people.member.token, body: { content: 'no' } }), 409, 'queue_full');
    expectStatus(await a.delete(`${queue}/${id}`, { token: people.member.token }), 200);
  }
  expectStatus(await a.post(queue, { token: people.member.token, body: { content: 'yes' } }), 201);
  assert.equal((await stored(pool, sessionId)).length, 3);
});

test('with auth off the synthetic admin may save the capacity', async () => {
  const admin = await localAdmin({ db: pool, publicUrl: PUBLIC_URL });
  const off = await instance(pool, url, { syntheticAdmin: admin });
  const res = await off.request('PATCH', PATH, { body: { max_per_session: 11 } });
  expectStatus(res, 200);
  assert.equal(res.body.effective.max_per_session, 11);
});

test('two admins saving different capacities at once on two instances: persisted = live = the last write on both', async () => {
  const second = await login(a, people.admin.email);
  for (let round = 0; round < 12; round++) {
    await a.fresh();
    await b.fresh();
    const wait = barrier(2);
    const values = [30 + round, 60 + round];
    await Promise.all([
      wait().then(() => a.request('PATCH', PATH, { token: people.admin.token, body: { max_per_session: values[0] } })),
      wait().then(() => b.request('PATCH', PATH, { token: second.token, body: { max_per_session: values[1] } })),
    ]);
    const last = ((await persisted()) as { max_per_session: number }).max_per_session;
    assert.ok(values.includes(last), `round ${round}: ${last}`);
    for (const h of [a, b]) {
      for (const deadline = Date.now() + 5_000; h.messages.capacity.current().effective !== last;) {
        assert.ok(
          Date.now() < deadline,
          `round ${round}: an instance stayed on ${h.messages.capacity.current().effective}`,
        );
        await new Promise((r) => setTimeout(r, 10));
      }
      assert.equal((await h.get(PATH, { token: people.member.token })).body.effective.max_per_session, last);
    }
  }
});
