// Found by the reliability suite (chaos/): a `serve` starting while its migration
// connection was terminated (pg_terminate_backend, a PostgreSQL restart) died of an
// unhandled 'error' event on that pg.Client instead of failing the migration. A lost
// connection must reject migrate() like any other failure.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { migrate } from '../../src/db/migrate.js';
import { createPool } from '../../src/db/pool.js';
import { emptyDatabase } from '../helpers/db.js';

test('a migration whose connection is terminated rejects; the process does not die of an error event', async () => {
  const url = await emptyDatabase('migrate_terminated');
  const pool = createPool({ url, max: 1, applicationName: 'migrate-terminator' });
  try {
    const slow = [{ version: 1, name: '0001_slow', sql: 'SELECT pg_sleep(60)', checksum: 'slow' }];
    const running = migrate(url, slow);
    const outcome = running.then(
      () => 'resolved',
      () => 'rejected',
    );
    let terminated = 0;
    for (let tries = 0; terminated === 0 && tries < 600; tries++) {
      const res = await pool.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND application_name = 'switchboard-migrate' AND query LIKE '%pg_sleep%'`,
      );
      terminated = res.rowCount ?? 0;
      if (terminated === 0) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(terminated, 1, 'the migration backend was found and terminated');
    assert.equal(await outcome, 'rejected');
    // An 'error' event emitted after the rejection would crash the test process here.
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    await pool.end();
  }
});
