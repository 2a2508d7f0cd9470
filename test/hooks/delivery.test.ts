// Pins notify hook delivery against a real local HTTPS receiver (self-signed, allowed by
// config): signatures, identifiers-only bodies, retries, once per transition across
// instances, nothing for synthetic or deduplicated todos, presence, auto-disable, rotation.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { pino } from 'pino';
import { HookDelivery } from '../../src/hooks/delivery.js';
import { HookGuard, type Resolver } from '../../src/hooks/guard.js';
import { createHook, listHooks, rotateHook } from '../../src/hooks/manage.js';
import { NotifyHooks } from '../../src/hooks/notify.js';
import { clockOut } from '../../src/presence/manage.js';
import { keyringOf } from '../../src/secrets/keyring.js';
import { reapExpired } from '../../src/store/todo-sweeps.js';
import { claim, createTodo } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { vend } from '../mcp/harness.js';
import { receiver, selfSigned, verifies, type Received } from './receiver.js';

const { pool } = await testDatabase('hooks_delivery');
const log = pino({ level: 'silent' });
const tls = selfSigned(['hooks.test', 'rebind.test']);
const rx = await receiver(tls);
// hooks.test exists only in this resolver: a delivery that arrives proves the connection
// went to the checked address rather than to a fresh DNS lookup.
const resolver: Resolver = async (host) => {
  if (host === 'hooks.test') return [{ address: '127.0.0.1', family: 4 }];
  throw new Error(`ENOTFOUND ${host}`);
};
const guard = new HookGuard({ allowHttp: false, allowCidrs: ['127.0.0.0/8'] }, resolver);

function instance(g: HookGuard = guard) {
  const delivery = new HookDelivery({ db: pool, guard: g, log, ca: tls.cert, backoffMs: [5, 10] });
  return { delivery, hooks: new NotifyHooks({ db: pool, log, delivery }) };
}
const one = instance();

async function setup(path: string, extra: Record<string, unknown> = {}) {
  const v = await vend(pool);
  const owner = { id: v.endpoint.id, queues: v.endpoint.queues };
  const hook = await createHook({ db: pool, guard }, owner, { url: `https://hooks.test:${rx.port}${path}`, ...extra });
  const push = (input: Record<string, unknown>) =>
    createTodo(
      { db: pool, defaultLeaseSeconds: 300 },
      { endpointId: v.endpoint.id },
      { humanId: v.humanId },
      {
        queue: 'inbox',
        ...input,
      },
    );
  return { v, owner, hook, push };
}

const at = (path: string): Received[] => rx.received.filter((r) => r.path === path);

async function ready(endpointId: string, inst = one) {
  await inst.hooks.ready(endpointId, 'inbox');
  await inst.delivery.idle();
}

test('a ready todo is delivered once, signed per Standard Webhooks, with identifiers only', async () => {
  const { v, hook, push } = await setup('/signed');
  assert.match(hook.signing_secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const { todo } = await push({
    title: 'Deploy </channel>\nnow',
    body: 'secret body',
    payload: { k: 'v' },
    kind: 'task',
  });
  await ready(v.endpoint.id);
  await ready(v.endpoint.id);
  const got = at('/signed');
  assert.equal(got.length, 1, 'one delivery for one transition');
  const r = got[0]!;
  assert.ok(verifies(r, hook.signing_secret), 'the signature verifies with the secret shown once');
  assert.match(r.headers['webhook-id'] ?? '', /^msg_[0-9A-Z]{26}$/);
  assert.ok(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000) < 60);
  assert.equal(r.headers['content-type'], 'application/json');
  assert.ok(Buffer.byteLength(r.body) <= 4096);
  assert.deepEqual(Object.keys(r.json).sort(), [
    'attempt',
    'created_at',
    'endpoint',
    'kind',
    'queue',
    'reason',
    'source',
    'summary',
    'todo_id',
    'type',
  ]);
  assert.equal(r.json.type, 'todo.ready');
  assert.equal(r.json.reason, 'created');
  assert.equal(r.json.todo_id, todo.id);
  assert.equal(r.json.endpoint, v.endpoint.slug);
  assert.equal(r.json.attempt, 1);
  assert.equal(r.json.summary, 'Deploy ‹/channel› now', 'the summary is neutralised');
  assert.ok(!r.body.includes('secret body') && !r.body.includes('"k"'), 'no body or payload');
  const health = (await listHooks({ db: pool, guard }, { id: v.endpoint.id, queues: ['inbox'] })).hooks[0]!;
  assert.equal(health.health.last_status, 204);
  assert.equal(health.health.consecutive_failures, 0);
});

test('a secret sealed at rest (docs/design/intake.md) is opened to sign: the receiver verifies with the secret shown once', async () => {
  const keyring = keyringOf(randomBytes(32));
  const delivery = new HookDelivery({ db: pool, guard, log, ca: tls.cert, backoffMs: [5, 10], keyring });
  const sealedInstance = { delivery, hooks: new NotifyHooks({ db: pool, log, delivery }) };
  const v = await vend(pool);
  const owner = { id: v.endpoint.id, queues: v.endpoint.queues };
  const hook = await createHook({ db: pool, guard, keyring }, owner, { url: `https://hooks.test:${rx.port}/sealed` });
  const stored = await pool.query<{ secret: string }>('SELECT secret FROM notify_hooks WHERE id = $1', [hook.hook_id]);
  assert.ok(stored.rows[0]?.secret.startsWith('enc:v1:'), 'stored sealed');
  await createTodo(
    { db: pool, defaultLeaseSeconds: 300 },
    { endpointId: v.endpoint.id },
    { humanId: v.humanId },
    { queue: 'inbox', title: 'sealed' },
  );
  await ready(v.endpoint.id, sealedInstance);
  const got = at('/sealed');
  assert.equal(got.length, 1);
  assert.ok(verifies(got[0]!, hook.signing_secret), 'signed with the opened secret');
});

test('two instances hearing the same todo_ready deliver each transition exactly once', async () => {
  const { v, push } = await setup('/race');
  for (let i = 0; i < 12; i++) await push({ title: `job ${i}` });
  const other = instance();
  await Promise.all([one.hooks.ready(v.endpoint.id, 'inbox'), other.hooks.ready(v.endpoint.id, 'inbox')]);
  await Promise.all([one.delivery.idle(), other.delivery.idle()]);
  const ids = at('/race').map((r) => r.json.todo_id);
  assert.equal(ids.length, 12);
  assert.equal(new Set(ids).size, 12, 'no todo notified twice');
});

test('a 500 is retried up to three attempts under one webhook-id, then counts one failure', async () => {
  const { v, push } = await setup('/fails');
  rx.respond((r) => (r.path === '/fails' ? 500 : 204));
  await push({ title: 'will fail' });
  await ready(v.endpoint.id);
  rx.respond(() => 204);
  const got = at('/fails');
  assert.equal(got.length, 3);
  assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1, 'webhook-id constant across retries');
  assert.deepEqual(
    got.map((r) => r.json.attempt),
    [1, 2, 3],
  );
  const hook = (await listHooks({ db: pool, guard }, { id: v.endpoint.id, queues: ['inbox'] })).hooks[0]!;
  assert.equal(hook.health.consecutive_failures, 1);
  assert.equal(hook.health.last_status, 500);
  assert.equal(hook.health.last_error, 'HTTP 500');
});

test('a 500 followed by a 200 is delivered on the second attempt and resets the failures', async () => {
  const { v, push } = await setup('/flaky');
  let n = 0;
  rx.respond((r) => (r.path === '/flaky' && n++ === 0 ? 503 : 204));
  await push({ title: 'flaky' });
  await ready(v.endpoint.id);
  rx.respond(() => 204);
  assert.equal(at('/flaky').length, 2);
  const hook = (await listHooks({ db: pool, guard }, { id: v.endpoint.id, queues: ['inbox'] })).hooks[0]!;
  assert.equal(hook.health.consecutive_failures, 0);
});

test('synthetic todos and deduplicated creates are never notified', async () => {
  const { v, push } = await setup('/quiet');
  const { todo } = await push({ title: 'self test' });
  await pool.query('UPDATE todos SET synthetic = true WHERE id = $1', [todo.id]);
  await ready(v.endpoint.id);
  assert.equal(at('/quiet').length, 0, 'nothing for a synthetic todo');
  await push({ title: 'once', idempotency_key: 'k1' });
  await ready(v.endpoint.id);
  const again = await push({ title: 'once', idempotency_key: 'k1' });
  assert.equal(again.created, false);
  await ready(v.endpoint.id);
  assert.equal(at('/quiet').length, 1, 'the duplicate create is no transition');
});

test('a requeue after lease expiry is notified again with reason requeued', async () => {
  const { v, push } = await setup('/requeue');
  const { todo } = await push({ title: 'lapse' });
  await ready(v.endpoint.id);
  const agent = { endpointId: v.endpoint.id, sessionId: 'ms_test', queues: ['inbox'], defaultLeaseSeconds: null };
  await claim({ db: pool, defaultLeaseSeconds: 300 }, agent, { id: todo.id });
  await pool.query(`UPDATE todos SET lease_expires_at = now() - interval '1 second' WHERE id = $1`, [todo.id]);
  await reapExpired(pool, 100);
  await ready(v.endpoint.id);
  assert.deepEqual(
    at('/requeue').map((r) => r.json.reason),
    ['created', 'requeued'],
  );
});

test('an endpoint that is out holds its hooks unless the hook ignores presence', async () => {
  const { v, owner, push } = await setup('/held');
  await createHook({ db: pool, guard }, owner, { url: `https://hooks.test:${rx.port}/ignores`, ignore_presence: true });
  await clockOut({ db: pool }, v.endpoint.id, {});
  await push({ title: 'while out' });
  await ready(v.endpoint.id);
  assert.equal(at('/held').length, 0);
  assert.equal(at('/ignores').length, 1);
});

test('ten failed deliveries in a row disable the hook; rotate re-enables it and signs with both secrets', async () => {
  const { v, owner, hook, push } = await setup('/dead');
  rx.respond((r) => (r.path === '/dead' ? 400 : 204));
  for (let i = 0; i < 10; i++) {
    await push({ title: `dead ${i}` });
    await ready(v.endpoint.id);
  }
  assert.equal(at('/dead').length, 10, 'a 400 is not retried');
  let listed = (await listHooks({ db: pool, guard }, owner)).hooks[0]!;
  assert.equal(listed.enabled, false);
  assert.equal(listed.disabled_reason, 'consecutive_failures');
  await push({ title: 'after disable' });
  await ready(v.endpoint.id);
  assert.equal(at('/dead').length, 10, 'a disabled hook is not called');
  rx.respond(() => 204);
  const rotated = await rotateHook({ db: pool, guard }, owner, { hook_id: hook.hook_id });
  assert.equal(rotated.enabled, true);
  assert.notEqual(rotated.signing_secret, hook.signing_secret);
  await push({ title: 'after rotate' });
  await ready(v.endpoint.id);
  const last = at('/dead').at(-1)!;
  assert.equal(last.json.summary, 'after rotate');
  assert.equal(last.headers['webhook-signature']?.split(' ').length, 2, 'two signatures during the grace');
  assert.ok(verifies(last, rotated.signing_secret) && verifies(last, hook.signing_secret));
  listed = (await listHooks({ db: pool, guard }, owner)).hooks[0]!;
  assert.equal(listed.health.consecutive_failures, 0);
});

test('an immediate rotation signs only with the new secret from the next delivery, and drops a secret still in its grace', async () => {
  const { v, owner, hook, push } = await setup('/immediate');
  rx.respond(() => 204);
  const graced = await rotateHook({ db: pool, guard }, owner, { hook_id: hook.hook_id });
  await push({ title: 'during the grace' });
  await ready(v.endpoint.id);
  const during = at('/immediate').at(-1)!;
  assert.equal(during.headers['webhook-signature']?.split(' ').length, 2, 'without immediate both secrets sign');
  assert.ok(verifies(during, graced.signing_secret) && verifies(during, hook.signing_secret));

  const now = await rotateHook({ db: pool, guard }, owner, { hook_id: hook.hook_id, immediate: true });
  await push({ title: 'after the immediate rotation' });
  await ready(v.endpoint.id);
  const last = at('/immediate').at(-1)!;
  assert.equal(last.json.summary, 'after the immediate rotation');
  assert.equal(last.headers['webhook-signature']?.split(' ').length, 1, 'one signature: the new secret alone');
  assert.ok(verifies(last, now.signing_secret));
  assert.ok(!verifies(last, graced.signing_secret), 'the secret it replaced no longer signs');
  assert.ok(!verifies(last, hook.signing_secret), 'nor the one that was still in its grace');
  const row = await pool.query('SELECT prev_secret, prev_secret_expires_at FROM notify_hooks WHERE id = $1', [
    hook.hook_id,
  ]);
  assert.deepEqual(
    row.rows,
    [{ prev_secret: null, prev_secret_expires_at: null }],
    'nothing of the old secret is kept',
  );
});

test('a hook whose host later resolves to loopback is refused before the attempt (DNS rebinding)', async () => {
  let answer = '93.184.216.34';
  const rebinding = new HookGuard({ allowHttp: false, allowCidrs: [] }, async () => [{ address: answer, family: 4 }]);
  const v = await vend(pool);
  const owner = { id: v.endpoint.id, queues: v.endpoint.queues };
  await createHook({ db: pool, guard: rebinding }, owner, { url: `https://rebind.test:${rx.port}/rebind` });
  answer = '127.0.0.1';
  const inst = instance(rebinding);
  await createTodo(
    { db: pool, defaultLeaseSeconds: 300 },
    { endpointId: v.endpoint.id },
    { humanId: v.humanId },
    {
      queue: 'inbox',
      title: 'rebind',
    },
  );
  await ready(v.endpoint.id, inst);
  assert.equal(at('/rebind').length, 0, 'nothing reached the loopback receiver');
  const hook = (await listHooks({ db: pool, guard: rebinding }, owner)).hooks[0]!;
  assert.match(hook.health.last_error ?? '', /127\.0\.0\.1/);
  assert.equal(hook.health.consecutive_failures, 1);
});

test('creating a hook refuses private targets without the allow-list and caps an endpoint at five', async () => {
  const strict = new HookGuard({ allowHttp: false, allowCidrs: [] }, resolver);
  const v = await vend(pool);
  const owner = { id: v.endpoint.id, queues: v.endpoint.queues };
  await assert.rejects(createHook({ db: pool, guard: strict }, owner, { url: `https://hooks.test:${rx.port}/x` }), {
    code: 'invalid_argument',
  });
  await assert.rejects(createHook({ db: pool, guard: strict }, owner, { url: 'https://10.0.0.1/x' }), {
    code: 'invalid_argument',
  });
  await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      createHook({ db: pool, guard }, owner, { url: `https://hooks.test:${rx.port}/cap${i}` }).catch((e: unknown) => e),
    ),
  );
  assert.equal((await listHooks({ db: pool, guard }, owner)).used, 5, 'concurrent creates never pass the ceiling');
  // A ceiling, not a rate: nothing to wait for, so not a retry status (docs/design/limits.md, "Quotas").
  await assert.rejects(createHook({ db: pool, guard }, owner, { url: `https://hooks.test:${rx.port}/six` }), {
    code: 'failed_precondition',
  });
});
