// Pins running behind PgBouncer in transaction mode: a real `serve` whose pool goes through
// a PgBouncer (pool_mode=transaction, started here) and whose bus and migrations connect
// directly (SWITCHBOARD_BUS_DATABASE_URL) runs the whole todo lifecycle — push, claim,
// heartbeat, extend, fail with a retry, complete — and a long-poll claim_next is woken
// through the bus when another push lands. Skips, saying why, without pgbouncer.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { pino } from 'pino';
import { parseConfig } from '../../src/config/index.js';
import { startServer, type Server } from '../../src/main.js';
import { claimNext, complete, createTodo, fail, heartbeat } from '../../src/todos/index.js';
import { testDatabase } from '../helpers/db.js';
import { agentOf, makeEndpoint } from '../helpers/fixtures.js';
import { freePort, makeScratch, postgresIds } from '../helpers/local-postgres.js';
import { until } from '../helpers/wait.js';

const PGBOUNCER = process.env.SWITCHBOARD_TEST_PGBOUNCER ?? '/usr/sbin/pgbouncer';
const missing = existsSync(PGBOUNCER) ? null : `${PGBOUNCER} is missing (apt-get install pgbouncer)`;
if (missing) console.log(`# pgbouncer tests skipped: ${missing}`);

let bouncer: ChildProcess | null = null;
let server: Server | null = null;
let direct = '';
let pooled = '';
let scratch = '';

before(async () => {
  if (missing) return;
  const db = await testDatabase('pgbouncer', 1);
  direct = db.url;
  const target = new URL(direct);
  scratch = await makeScratch('sb-pgbouncer-');
  const port = await freePort();
  const ini = join(scratch, 'pgbouncer.ini');
  await writeFile(
    ini,
    [
      '[databases]',
      `* = host=${target.hostname} port=${target.port || 5432} user=${decodeURIComponent(target.username) || 'postgres'}${target.password ? ` password=${decodeURIComponent(target.password)}` : ''}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = any',
      'pool_mode = transaction',
      'default_pool_size = 4',
      'max_client_conn = 100',
      // node-postgres sends none of the timeouts with SWITCHBOARD_DB_POOLER=transaction;
      // anything else unknown in the startup packet would be refused.
      'ignore_startup_parameters = extra_float_digits',
      `logfile = ${join(scratch, 'pgbouncer.log')}`,
      `pidfile = ${join(scratch, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  // As root, as the postgres user (pgbouncer refuses root), spawned directly so the kill
  // in after() reaches pgbouncer itself.
  const ids = await postgresIds();
  bouncer = spawn(PGBOUNCER, [ini], { stdio: 'ignore', ...(ids ?? {}) });
  pooled = `postgres://postgres@127.0.0.1:${port}${target.pathname}`;
  await until(async () => {
    const c = new pg.Client({ connectionString: pooled });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.end();
      return true;
    } catch {
      return false;
    }
  }, 'pgbouncer to accept connections');
  const parsed = parseConfig({
    SWITCHBOARD_DATABASE_URL: pooled,
    SWITCHBOARD_BUS_DATABASE_URL: direct,
    SWITCHBOARD_DB_POOLER: 'transaction',
    SWITCHBOARD_LISTEN: '127.0.0.1:0',
    SWITCHBOARD_INSTANCE_ID: 'pgbouncer-test',
    SWITCHBOARD_DB_POOL_SIZE: '6',
  });
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('; '));
  server = await startServer(parsed.config, pino({ level: 'silent' }));
});

after(async () => {
  await server?.stop();
  if (bouncer && bouncer.exitCode === null) {
    const exited = new Promise((r) => bouncer!.once('exit', r));
    bouncer.kill('SIGINT');
    await exited;
  }
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test(
  'behind a transaction pooler the whole lifecycle works and a long-poll is woken through the direct bus',
  { skip: missing ?? false },
  async () => {
    const s = server!;
    const pool = s.pool;
    // The LISTEN session is direct (it shows up under its own application_name).
    const listen = await pool.query<{ n: number }>(
      `SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = 'switchboard-listen' AND datname = current_database()`,
    );
    assert.equal(listen.rows[0]!.n, 1, 'the bus listens on its own direct session');

    const endpoint = await makeEndpoint(pool, { queues: ['inbox'] });
    const a = agentOf(endpoint, 'session-a');
    const b = agentOf(endpoint, 'session-b');
    const push = (title: string, extra: Record<string, unknown> = {}) =>
      createTodo(
        s.todos,
        { endpointId: endpoint.id },
        { humanId: endpoint.human_id },
        { queue: 'inbox', title, ...extra },
      );

    // Push, claim, heartbeat (extend), complete: each verb's named statements run unnamed.
    const first = (await push('first')).todo;
    const claimed = await claimNext(s.todos, a, {});
    assert.ok('todo' in claimed);
    assert.equal(claimed.todo.id, first.id);
    for (let i = 0; i < 3; i++) {
      const beat = await heartbeat(s.todos, a, { id: first.id, lease_seconds: 600 });
      assert.equal(beat.todo.state, 'claimed');
    }
    const done = await complete(s.todos, a, { id: first.id, result: { ok: true } });
    assert.equal(done.todo.state, 'done');

    // Fail with a retry, the retry claimed again by another session, then completed.
    const second = (await push('second', { max_attempts: 3 })).todo;
    const c2 = await claimNext(s.todos, a, {});
    assert.ok('todo' in c2 && c2.todo.id === second.id);
    const failed = await fail(s.todos, a, { id: second.id, error: 'flaky' });
    assert.ok(['pending', 'failed'].includes(failed.todo.state), failed.todo.state);
    await pool.query(`UPDATE todos SET next_retry_at = now(), ready_at = now() WHERE id = $1`, [second.id]);
    await until(async () => {
      const r = await claimNext(s.todos, b, {});
      return 'todo' in r && r.todo.id === second.id;
    }, 'the retry to be claimable again');
    assert.equal((await complete(s.todos, b, { id: second.id, result: {} })).todo.state, 'done');

    // A long-poll on an empty queue, woken by a push: the NOTIFY is sent through PgBouncer
    // inside the push's transaction and heard on the direct LISTEN session.
    const started = Date.now();
    const waiting = claimNext(s.todos, a, { wait_seconds: 20 }, { waiters: s.waiters });
    await until(() => s.waiters.waiting(endpoint.id) === 1, 'the claim to wait');
    const third = (await push('third')).todo;
    const woke = await waiting;
    assert.ok('todo' in woke, 'the waiter got the todo');
    assert.equal(woke.todo.id, third.id);
    assert.ok(Date.now() - started < 10_000, 'woken by the bus, not by the fallback re-check');

    // Many concurrent verbs over few server connections: no statement leaks across clients.
    const many = await Promise.all(Array.from({ length: 20 }, (_, i) => push(`batch ${i}`)));
    assert.equal(many.length, 20);
    const settled = await Promise.all(
      many.map(async () => {
        const r = await claimNext(s.todos, b, {});
        assert.ok('todo' in r);
        return complete(s.todos, b, { id: r.todo.id, result: {} });
      }),
    );
    assert.ok(settled.every((r) => r.todo.state === 'done'));
  },
);

test('the readiness check answers ready through the pooler', { skip: missing ?? false }, async () => {
  const res = await server!.app.inject({ method: 'GET', url: '/readyz' });
  assert.equal(res.statusCode, 200, res.body);
});
