// Pins failover through a multi-host URL on two real servers, a primary and its streaming
// standby (listed first): every write lands on the primary, and when the primary stops and
// the standby is promoted, the pool and the LISTEN connection move to it within seconds,
// while in between the pool answers "unreachable" (so /readyz says not ready).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { NotifyBus, CHANNEL } from '../../src/db/bus.js';
import { createPool, ping, withTx, type Pool } from '../../src/db/pool.js';
import { databaseProblem } from '../../src/db/unavailable.js';
import { migrate } from '../../src/db/migrate.js';
import { missingBinaries, primaryAndStandby, type LocalServer } from '../helpers/local-postgres.js';
import { until } from '../helpers/wait.js';

const missing = missingBinaries();
if (missing) console.log(`# failover tests skipped: ${missing}`);

let servers: { primary: LocalServer; standby: LocalServer; dispose: () => Promise<void> } | null = null;
let url = '';

before(async () => {
  if (missing) return;
  servers = await primaryAndStandby();
  const { primary, standby } = servers;
  url = `postgres://postgres@127.0.0.1:${standby.port},127.0.0.1:${primary.port}/postgres?target_session_attrs=read-write`;
});

after(async () => {
  await servers?.dispose();
});

const serverPort = async (pool: Pool) =>
  (await pool.query<{ port: number }>('SELECT inet_server_port() AS port')).rows[0]!.port;

test(
  'with the standby listed first, migrations, the pool and the bus all land on the primary; after a failover they move to the promoted standby',
  { skip: missing ?? false },
  async () => {
    const { primary, standby } = servers!;
    await migrate(url);
    const pool = createPool({ url, max: 4 });
    const bus = new NotifyBus({ url, backoff: { initialMs: 20, maxMs: 200 } });
    const heard: string[] = [];
    let repolls = 0;
    bus.subscribe('settings_changed', (e) => heard.push(e.key));
    bus.onReconnect(() => (repolls += 1));
    try {
      await bus.start();
      await pool.query('CREATE TABLE IF NOT EXISTS writes (n int, port int DEFAULT inet_server_port())');
      // Concurrent writes, so the pool opens several connections, each one choosing its host.
      await Promise.all(Array.from({ length: 20 }, (_, n) => pool.query('INSERT INTO writes (n) VALUES ($1)', [n])));
      await withTx(pool, (tx) => tx.query('INSERT INTO writes (n) VALUES (20)'));
      const ports = await pool.query<{ port: number; count: number }>(
        'SELECT port, count(*) FROM writes GROUP BY port',
      );
      assert.deepEqual(ports.rows, [{ port: primary.port, count: 21 }]);
      assert.ok(pool.totalCount > 1, 'several pooled connections were opened');
      const applied = await pool.query<{ count: number }>('SELECT count(*) FROM schema_migrations');
      assert.ok(applied.rows[0]!.count > 0, 'migrations ran on the primary');

      await pool.query(`SELECT pg_notify('${CHANNEL}', '{"type":"settings_changed","key":"before"}')`);
      await until(() => heard.includes('before'), 'the bus to hear a notification sent on the primary');

      // The primary goes away: no writable server answers until the standby is promoted.
      await primary.stop('fast');
      const down = await ping(pool).then(
        () => null,
        (err: unknown) => err,
      );
      assert.ok(down, 'no writable primary: the ping fails');
      assert.equal(databaseProblem(down), 'database_unreachable', String(down));
      await until(() => !bus.listening, 'the bus to notice its connection is gone');

      const promotedAt = Date.now();
      await standby.promote();
      let writableAfterMs = -1;
      await until(
        async () => {
          try {
            await pool.query('INSERT INTO writes (n) VALUES (21)');
            writableAfterMs = Date.now() - promotedAt;
            return true;
          } catch {
            return false;
          }
        },
        'a write to succeed on the promoted standby',
        10_000,
        50,
      );
      console.log(`# first write on the promoted standby ${writableAfterMs} ms after pg_ctl promote returned`);
      assert.equal(await serverPort(pool), standby.port);
      const after = await pool.query<{ port: number }>('SELECT port FROM writes WHERE n = 21');
      assert.deepEqual(after.rows, [{ port: standby.port }]);

      await until(() => bus.listening && repolls > 0, 'the bus to reconnect and tell subscribers to re-poll');
      await pool.query(`SELECT pg_notify('${CHANNEL}', '{"type":"settings_changed","key":"after"}')`);
      await until(() => heard.includes('after'), 'the bus to hear a notification sent on the new primary');
    } finally {
      await bus.stop();
      await pool.end();
    }
  },
);

test(
  'a URL whose every host is a standby never hands out a connection: the error is an unreachable database',
  { skip: missing ?? false },
  async () => {
    // After the first test the old standby is the primary; this one points at the stopped
    // old primary and at a read-only session of the new primary, so nothing fits.
    const { primary, standby } = servers!;
    const readOnly = `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres?target_session_attrs=read-write&options=-c%20default_transaction_read_only%3Don`;
    const pool = createPool({ url: readOnly, max: 2 });
    try {
      const err = await pool.query('SELECT 1').then(
        () => null,
        (e: unknown) => e as Error,
      );
      assert.ok(err);
      assert.equal(databaseProblem(err), 'database_unreachable');
      assert.match(err.message, /no host gave a read-write session/);
      assert.match(err.message, /read-only/);
    } finally {
      await pool.end();
    }
  },
);
