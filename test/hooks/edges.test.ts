// Pins the notify hook edges against a real local HTTPS receiver: due retries notify as
// requeued, redirects are not followed, overflow is dropped and counted, lost notices are
// caught by the sweep, outcomes are counted, and a clock-in digest sends one backlog.

import { clearPolicy, setPolicy } from '../../src/budgets/service.js';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { HookDelivery } from '../../src/hooks/delivery.js';
import { HookGuard, type Resolver } from '../../src/hooks/guard.js';
import { createHook } from '../../src/hooks/manage.js';
import { NotifyHooks } from '../../src/hooks/notify.js';
import { Metrics } from '../../src/metrics/index.js';
import { PresenceService, type DigestSender } from '../../src/presence/digest.js';
import { clockIn, clockOut } from '../../src/presence/manage.js';
import { requeueDueRetries } from '../../src/store/todo-sweeps.js';
import { askHuman, claim, createTodo, fail, type AskedEvent } from '../../src/todos/index.js';
import { until } from '../helpers/wait.js';
import { testDatabase } from '../helpers/db.js';
import { vend } from '../mcp/harness.js';
import { receiver, selfSigned, verifies, type Received } from './receiver.js';

const { pool } = await testDatabase('hooks_edges');
const log = pino({ level: 'silent' });
const tls = selfSigned(['hooks.test']);
const rx = await receiver(tls);
const resolver: Resolver = async () => [{ address: '127.0.0.1', family: 4 }];
const guard = new HookGuard({ allowHttp: false, allowCidrs: ['127.0.0.0/8'] }, resolver);
const metrics = new Metrics({ defaults: false });
const counted = metrics.hooks;

function instance(extra: { queueMax?: number } = {}) {
  const delivery = new HookDelivery({
    db: pool,
    guard,
    log,
    ca: tls.cert,
    backoffMs: [5, 10],
    metrics: counted,
    ...extra,
  });
  return { delivery, hooks: new NotifyHooks({ db: pool, log, delivery }) };
}
const one = instance();
const at = (path: string): Received[] => rx.received.filter((r) => r.path === path);

async function setup(path: string) {
  const v = await vend(pool);
  const owner = { id: v.endpoint.id, queues: v.endpoint.queues };
  const hook = await createHook({ db: pool, guard }, owner, { url: `https://hooks.test:${rx.port}${path}` });
  const push = (title: string) =>
    createTodo(
      { db: pool, defaultLeaseSeconds: 300 },
      { endpointId: v.endpoint.id },
      { humanId: v.humanId },
      {
        queue: 'inbox',
        title,
      },
    );
  return { v, hook, push };
}

async function ready(endpointId: string, inst = one) {
  await inst.hooks.ready(endpointId, 'inbox');
  await inst.delivery.idle();
}

test('a failed todo whose retry falls due is notified again as requeued', async () => {
  const { v, push } = await setup('/retry');
  const { todo } = await push('retry me');
  await ready(v.endpoint.id);
  const deps = { db: pool, defaultLeaseSeconds: 300 };
  const agent = { endpointId: v.endpoint.id, sessionId: 'ms_retry', queues: ['inbox'], defaultLeaseSeconds: null };
  await claim(deps, agent, { id: todo.id });
  await fail(deps, agent, { id: todo.id, error: 'boom' });
  await pool.query(`UPDATE todos SET next_retry_at = now() - interval '1 second' WHERE id = $1`, [todo.id]);
  assert.equal(await requeueDueRetries(pool, 100), 1);
  await ready(v.endpoint.id);
  assert.deepEqual(
    at('/retry').map((r) => r.json.reason),
    ['created', 'requeued'],
  );
});

test('a redirect is a failed attempt and is never followed', async () => {
  const { v, push } = await setup('/moved');
  rx.respond((r) => (r.path === '/moved' ? 302 : 204));
  await push('moved');
  await ready(v.endpoint.id);
  rx.respond(() => 204);
  assert.equal(at('/moved').length, 1, 'a 3xx is not retried');
  const row = await pool.query('SELECT last_status, consecutive_failures FROM notify_hooks WHERE endpoint_id = $1', [
    v.endpoint.id,
  ]);
  assert.deepEqual(row.rows[0], { last_status: 302, consecutive_failures: 1 });
});

test('a full delivery queue drops and counts what does not fit', async () => {
  const { v, push } = await setup('/slow');
  let release: () => void = () => undefined;
  const gate = new Promise<void>((resolve) => (release = resolve));
  rx.respond(async (r) => {
    if (r.path === '/slow') await gate;
    return 204;
  });
  for (let i = 0; i < 10; i++) await push(`burst ${i}`);
  const small = instance({ queueMax: 2 });
  await small.hooks.ready(v.endpoint.id, 'inbox');
  assert.equal(small.delivery.dropped, 4, 'four workers busy and two queued: four of ten dropped');
  release();
  await small.delivery.idle();
  rx.respond(() => 204);
  assert.equal(at('/slow').length, 6);
  const text = await metrics.registry.metrics();
  assert.match(text, /switchboard_notify_hook_notifications_total\{type="todo.ready",outcome="dropped"\} 4/);
});

test('the hook sweep delivers a transition whose todo_ready notice was lost', async () => {
  const { v, push } = await setup('/lost');
  const { todo } = await push('notice lost');
  await pool.query(
    `UPDATE todos SET created_at = now() - interval '10 seconds', updated_at = now() - interval '10 seconds' WHERE id = $1`,
    [todo.id],
  );
  await pool.query(`UPDATE notify_hooks SET created_at = now() - interval '1 minute' WHERE endpoint_id = $1`, [
    v.endpoint.id,
  ]);
  const other = instance();
  const [a, b] = await Promise.all([one.hooks.sweep(), other.hooks.sweep()]);
  await Promise.all([one.delivery.idle(), other.delivery.idle()]);
  assert.equal(a.queued + b.queued, 1, 'decided once even when two sweeps race');
  assert.equal(at('/lost').length, 1);
  assert.equal(at('/lost')[0]?.json.todo_id, todo.id);
});

test('delivered and failed notifications and their attempts are counted', async () => {
  const text = await metrics.registry.metrics();
  assert.match(text, /switchboard_notify_hook_notifications_total\{type="todo.ready",outcome="delivered"\} [1-9]/);
  assert.match(text, /switchboard_notify_hook_notifications_total\{type="todo.ready",outcome="failed"\} [1-9]/);
  assert.match(text, /switchboard_notify_hook_attempts_total\{result="2xx"\} [1-9]/);
  assert.match(text, /switchboard_notify_hook_attempts_total\{result="3xx"\} [1-9]/);
});

test('a clock-in digest sends one todos.backlog per hook and rings one streaming session, once across instances', async () => {
  const { v, hook, push } = await setup('/backlog');
  await pool.query(
    `INSERT INTO mcp_sessions (endpoint_id, id, instance, stream_open, channel) VALUES ($1, 'ms_digest', 'x', true, true)`,
    [v.endpoint.id],
  );
  await clockOut({ db: pool }, v.endpoint.id, {});
  await push('waiting one');
  await push('waiting two');
  await ready(v.endpoint.id);
  assert.equal(at('/backlog').length, 0, 'held while out');
  const rung: Array<{ session: string; meta: Record<string, string> }> = [];
  const sender: DigestSender = {
    async send(ring, params) {
      rung.push({ session: ring.sessionId, meta: params.meta });
    },
  };
  const other = instance();
  const pa = new PresenceService({ db: pool, log, doorbell: sender, hooks: one.hooks });
  const pb = new PresenceService({ db: pool, log, doorbell: sender, hooks: other.hooks });
  await clockIn({ db: pool }, v.endpoint.id, {});
  await Promise.all([pa.digest(v.endpoint.id), pb.digest(v.endpoint.id), pa.digest(v.endpoint.id)]);
  await Promise.all([one.delivery.idle(), other.delivery.idle()]);
  assert.equal(rung.length, 1);
  assert.deepEqual(rung[0], {
    session: 'ms_digest',
    meta: { kind: 'digest', pending: '2', queues: 'inbox', reason: 'clock_in', ring_id: rung[0]!.meta.ring_id! },
  });
  const got = at('/backlog');
  assert.equal(got.length, 1);
  assert.ok(verifies(got[0]!, hook.signing_secret));
  assert.equal(got[0]!.json.type, 'todos.backlog');
  assert.equal(got[0]!.json.pending, 2);
  assert.deepEqual(got[0]!.json.queues, ['inbox']);
  assert.equal(got[0]!.json.reason, 'clock_in');
});

test('stopping delivery does not wait out the retry backoff', async () => {
  const { v, push } = await setup('/stopping');
  rx.respond((r) => (r.path === '/stopping' ? 503 : 204));
  const slow = new HookDelivery({ db: pool, guard, log, ca: tls.cert, backoffMs: [60_000, 60_000] });
  const hooks = new NotifyHooks({ db: pool, log, delivery: slow });
  await push('stop me');
  await hooks.ready(v.endpoint.id, 'inbox');
  for (let i = 0; i < 200 && at('/stopping').length === 0; i++) await new Promise((r) => setTimeout(r, 10));
  const started = Date.now();
  await slow.stop();
  rx.respond(() => 204);
  assert.ok(Date.now() - started < 5_000, 'stop returned without the minute of backoff');
  assert.equal(at('/stopping').length, 1);
  assert.equal(
    slow.enqueue({ endpointId: v.endpoint.id, hookId: 'nh_x', messageId: 'msg_x', type: 'todo.ready', body: {} }),
    false,
  );
});

test('a deferred queue gets no notification, and its held transitions are announced when it reopens', async () => {
  const { v, push } = await setup('/deferred');
  const who = { humanId: v.humanId, endpointId: null };
  // A real budget: max_in_flight 0 pauses the queue (docs/design/admission.md), so its
  // work is deferred.
  await setPolicy({ db: pool }, who, v.endpoint.id, 'inbox', { max_in_flight: 0 });
  const gated = new NotifyHooks({ db: pool, log, delivery: one.delivery });
  await push('held one');
  await push('held two');
  await gated.ready(v.endpoint.id, 'inbox');
  await one.delivery.idle();
  assert.equal(at('/deferred').length, 0, 'nothing while deferred');
  await clearPolicy({ db: pool }, who, v.endpoint.id, 'inbox');
  await gated.ready(v.endpoint.id, 'inbox');
  await one.delivery.idle();
  assert.deepEqual(
    at('/deferred')
      .map((r) => r.json.summary)
      .sort(),
    ['held one', 'held two'],
  );
});

test('an agent asking a human sends each matching hook one signed todo.waiting_on_human with the question', async () => {
  const { v, hook, push } = await setup('/asked');
  const { todo } = await push('deploy tonight');
  const agent = {
    endpointId: v.endpoint.id,
    sessionId: 's-asker',
    queues: v.endpoint.queues,
    defaultLeaseSeconds: null,
  };
  const deps = {
    db: pool,
    defaultLeaseSeconds: 300,
    asked: (e: AskedEvent) =>
      void one.hooks.waitingOnHuman({
        endpointId: e.endpointId,
        todoId: e.todo.id,
        queue: e.todo.queue,
        title: e.todo.title,
        question: e.question,
        choices: e.choices,
        askedAt: e.askedAt,
        expiresAt: e.expiresAt,
        traceparent: e.traceparent,
      }),
  };
  await claim(deps, agent, { id: todo.id });
  await askHuman(deps, agent, { id: todo.id, question: 'Deploy now or after QA?', choices: ['now', 'after QA'] });
  await until(() => at('/asked').some((r) => r.json.type === 'todo.waiting_on_human'), 'the waiting_on_human hook');
  await one.delivery.idle();
  const got = at('/asked').filter((r) => r.json.type === 'todo.waiting_on_human');
  assert.equal(got.length, 1);
  assert.ok(verifies(got[0]!, hook.signing_secret));
  assert.equal(got[0]!.json.todo_id, todo.id);
  assert.equal(got[0]!.json.question, 'Deploy now or after QA?');
  assert.deepEqual(got[0]!.json.choices, ['now', 'after QA']);
  assert.equal(got[0]!.json.summary, 'deploy tonight');
  assert.equal(typeof got[0]!.json.expires_at, 'string');
});
