// Pins signing secrets at rest: sealed with AES-256-GCM under the server key (webhooks and notify hooks), opened to verify and to sign, the key generated once (0600) for an embedded install, stored secrets resealed at start, and a start that cannot open them refused with a clear error.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { keyringOf, loadKeyring, NO_KEYRING, open, seal, SEALED_PREFIX } from '../../src/secrets/keyring.js';
import { checkAndReseal, MissingSecretKey } from '../../src/secrets/reseal.js';
import { testDatabase } from '../helpers/db.js';
import { expectError, expectStatus, Harness, makePeople, PUBLIC_URL, vend } from '../api/app.js';
import * as send from './senders.js';

const key = randomBytes(32);
const keyring = keyringOf(key);

test('seal and open: AES-256-GCM under the current key; text stored before a key opens as is; another key refuses', () => {
  const sealed = seal(keyring, 'whsec_plain');
  assert.ok(sealed.startsWith(`${SEALED_PREFIX}${keyring.current?.id}:`), sealed);
  assert.ok(!sealed.includes('whsec_plain'));
  assert.notEqual(seal(keyring, 'whsec_plain'), sealed, 'a fresh IV each time');
  assert.equal(open(keyring, sealed), 'whsec_plain');
  assert.equal(open(keyring, 'whsec_legacy'), 'whsec_legacy');
  assert.equal(seal(NO_KEYRING, 'whsec_plain'), 'whsec_plain', 'no key: stored as issued');
  assert.throws(() => open(keyringOf(randomBytes(32)), sealed), /not configured/);
  assert.throws(() => open(NO_KEYRING, sealed), /not configured/);
  const tampered = sealed.slice(0, -4) + (sealed.endsWith('AAA=') ? 'BBB=' : 'AAA=');
  assert.throws(() => open(keyring, tampered));
  const rotated = keyringOf(randomBytes(32), [key]);
  assert.equal(open(rotated, sealed), 'whsec_plain', 'the previous key still opens');
});

test('an embedded install generates its key once into the data dir, 0600; a given key must be 32 bytes', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'sb-key-'));
  after(() => rm(dir, { recursive: true, force: true }));
  const settings = { key: null, keyFile: null, previous: null, dataDir: dir, embedded: true };
  const first = await loadKeyring(settings);
  const second = await loadKeyring(settings);
  assert.ok(first.current);
  assert.equal(second.current?.id, first.current.id, 'the same key on the next start');
  assert.equal((await stat(join(dir, 'secret.key'))).mode & 0o777, 0o600);
  assert.equal(
    (await loadKeyring({ ...settings, embedded: false, dataDir: join(dir, 'none') })).current,
    null,
    'an external database with no key: none',
  );
  const given = await loadKeyring({ ...settings, key: key.toString('base64') });
  assert.equal(given.current?.id, keyring.current?.id);
  await assert.rejects(loadKeyring({ ...settings, key: 'c2hvcnQ=' }), /SWITCHBOARD_SECRET_KEY: not a 32-byte key/);
  const file = join(dir, 'secret.key');
  const fromFile = await loadKeyring({ ...settings, embedded: false, keyFile: file });
  assert.equal(fromFile.current?.id, first.current.id);
  assert.match(await readFile(file, 'utf8'), /^[A-Za-z0-9+/]{43}=\n$/);
});

const { pool } = await testDatabase('webhook_sealed');
// Notify hooks may target loopback here, so a hook is made without a network.
const h = await new Harness(pool).init({
  env: { SWITCHBOARD_PUBLIC_URL: PUBLIC_URL, SWITCHBOARD_NOTIFY_HOOK_ALLOW_CIDRS: '127.0.0.0/8' },
  keyring,
});
after(() => h.close());
const { member } = await makePeople(h);
const { endpoint } = await vend(h, member, { name: 'sealed', queues: ['inbox'] });

test('a webhook’s and a notify hook’s signing secrets are stored sealed, and a sealed secret still verifies', async () => {
  const made = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'inbox', provider: 'github' },
  });
  expectStatus(made, 201);
  const stored = await pool.query<{ secret: string }>('SELECT secret FROM webhooks WHERE id = $1', [
    made.body.webhook.id,
  ]);
  assert.ok(stored.rows[0]?.secret.startsWith(SEALED_PREFIX), stored.rows[0]?.secret);
  assert.ok(!stored.rows[0]?.secret.includes(made.body.secret));
  const raw = await send.fixture('github-issues.json');
  const path = String(made.body.url).slice(PUBLIC_URL.length);
  const ok = await send.github(made.body.secret, 'issues', raw);
  expectStatus(await h.post(path, { payload: ok.raw, headers: ok.headers }), 201);
  const bad = await send.github('whsec_wrong', 'issues', raw);
  expectError(await h.post(path, { payload: bad.raw, headers: bad.headers }), 401, 'unauthenticated');

  const hook = await h.post(`/api/v1/endpoints/${endpoint.slug}/notify-hooks`, {
    token: member.token,
    body: { url: 'https://127.0.0.1:9/switchboard' },
  });
  expectStatus(hook, 201, 'notify hook');
  const row = await pool.query<{ secret: string }>('SELECT secret FROM notify_hooks WHERE endpoint_id = $1', [
    endpoint.id,
  ]);
  assert.ok(row.rows[0]?.secret.startsWith(SEALED_PREFIX));
  assert.equal(open(keyring, row.rows[0]!.secret), hook.body.signing_secret);
});

test('a start reseals secrets stored as issued, and refuses a database sealed under a key it lacks', async () => {
  const plain = await h.post(`/api/v1/endpoints/${endpoint.slug}/webhooks`, {
    token: member.token,
    body: { queue: 'inbox', provider: 'gitlab' },
  });
  expectStatus(plain, 201);
  await pool.query('UPDATE webhooks SET secret = $2 WHERE id = $1', [plain.body.webhook.id, 'legacy-plain-token-1234']);
  const { resealed } = await checkAndReseal(pool, keyring);
  assert.ok(resealed >= 1);
  const row = await pool.query<{ secret: string }>('SELECT secret FROM webhooks WHERE id = $1', [
    plain.body.webhook.id,
  ]);
  assert.equal(open(keyring, row.rows[0]!.secret), 'legacy-plain-token-1234');
  assert.deepEqual(await checkAndReseal(pool, keyring), { resealed: 0 }, 'nothing left to reseal');

  await assert.rejects(checkAndReseal(pool, keyringOf(randomBytes(32))), (err: unknown) => {
    assert.ok(err instanceof MissingSecretKey);
    assert.match(err.message, /SWITCHBOARD_SECRET_KEY/);
    return true;
  });
  await assert.rejects(checkAndReseal(pool, NO_KEYRING), MissingSecretKey);
  const rotated = keyringOf(randomBytes(32), [key]);
  assert.ok((await checkAndReseal(pool, rotated)).resealed >= 2, 'a rotation reseals under the new key');
  await assert.rejects(checkAndReseal(pool, keyring), MissingSecretKey, 'the old key alone no longer opens them');
  await checkAndReseal(pool, keyringOf(key, [rotated.current!.key]));
});
