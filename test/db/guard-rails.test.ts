// The database guard rails (docs/design/scale.md): every pooled connection carries a
// statement_timeout and an idle_in_transaction_session_timeout, while migrations run on
// their own connection without either.

import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { loadMigrations, migrate, type Migration } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { testDatabase } from '../helpers/db.js';

const db = await testDatabase('guard_rails');
const guarded = createPool({ url: db.url, max: 2, statementTimeoutMs: 200, idleInTransactionTimeoutMs: 300 });
after(() => guarded.end());

test('a pooled connection carries the configured statement and idle-in-transaction timeouts', async () => {
  const statement = await guarded.query<{ statement_timeout: string }>('SHOW statement_timeout');
  const idle = await guarded.query<{ idle_in_transaction_session_timeout: string }>(
    'SHOW idle_in_transaction_session_timeout',
  );
  assert.equal(statement.rows[0]?.statement_timeout, '200ms');
  assert.equal(idle.rows[0]?.idle_in_transaction_session_timeout, '300ms');
});

test('a statement running past the timeout is cancelled with a clear error, and the pool goes on serving', async () => {
  await assert.rejects(guarded.query('SELECT pg_sleep(2)'), (err: Error & { code?: string }) => {
    assert.equal(err.code, '57014');
    assert.match(err.message, /canceling statement due to statement timeout/);
    return true;
  });
  assert.deepEqual((await guarded.query<{ one: number }>('SELECT 1 AS one')).rows, [{ one: 1 }]);
});

test('a transaction left idle past its timeout is ended by PostgreSQL', async () => {
  const client = await guarded.connect();
  let lost: Error | undefined;
  client.on('error', (err) => (lost = err));
  try {
    await client.query('BEGIN');
    await client.query('SELECT 1');
    // Idle inside the transaction for longer than 300 ms: the server closes the session.
    await new Promise((resolve) => setTimeout(resolve, 800));
    await assert.rejects(client.query('SELECT 1'));
    assert.ok(lost === undefined || /idle-in-transaction|terminat/i.test(lost.message), String(lost));
  } finally {
    client.release(true);
  }
});

test('zero sets no timeout of its own: the connection keeps the database default', async () => {
  const open = createPool({ url: db.url, max: 1, statementTimeoutMs: 0, idleInTransactionTimeoutMs: 0 });
  try {
    const statement = await open.query<{ statement_timeout: string }>('SHOW statement_timeout');
    assert.equal(statement.rows[0]?.statement_timeout, '0');
    await open.query('SELECT pg_sleep(0.4)');
  } finally {
    await open.end();
  }
});

test('a migration slower than the pool timeout runs to completion: migrations are not limited', async () => {
  const known = await loadMigrations();
  const last = known.at(-1)!;
  const slow: Migration = {
    version: last.version + 1,
    name: `${String(last.version + 1).padStart(4, '0')}_slow_test.sql`,
    sql: "SELECT pg_sleep(0.5); CREATE TABLE guard_rail_probe (setting text); INSERT INTO guard_rail_probe SELECT current_setting('statement_timeout');",
    checksum: 'slow-test',
  };
  // Even a database default of 100 ms does not reach the migration's connection.
  await guarded.query(`ALTER DATABASE ${db.name} SET statement_timeout = '100ms'`);
  try {
    const result = await migrate(db.url, [...known, slow]);
    assert.deepEqual(result.applied, [slow.name]);
  } finally {
    await guarded.query(`ALTER DATABASE ${db.name} RESET statement_timeout`);
  }
  const probe = await guarded.query<{ setting: string }>('SELECT setting FROM guard_rail_probe');
  assert.deepEqual(probe.rows, [{ setting: '0' }]);
});
