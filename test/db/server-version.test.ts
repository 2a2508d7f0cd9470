// The start refuses a PostgreSQL older than 15 (src/db/server-version.ts, called by
// migrate() before it writes anything): the check on made-up server_version_num values,
// against a stand-in server that reports PostgreSQL 14, and against the real server the
// tests run on.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import pg from 'pg';
import {
  checkServerVersion,
  checkServerVersionNum,
  describeVersionNum,
  MIN_SERVER_VERSION_NUM,
  ServerVersionError,
} from '../../src/db/server-version.js';
import { adminUrl } from '../helpers/db.js';

/** A Queryable that answers every query with server_version_num = `v`. */
function fakeServer(v: string) {
  const seen: string[] = [];
  return {
    seen,
    query: (sql: string) => {
      seen.push(sql);
      return Promise.resolve({ rows: [{ v }] });
    },
  } as unknown as pg.Client & { seen: string[] };
}

test('versions read as PostgreSQL names them', () => {
  assert.equal(describeVersionNum(140011), 'PostgreSQL 14.11');
  assert.equal(describeVersionNum(150000), 'PostgreSQL 15.0');
  assert.equal(describeVersionNum(180001), 'PostgreSQL 18.1');
  assert.equal(describeVersionNum(90624), 'PostgreSQL 9.6.24');
});

test('15 and later pass; 14, 13 and 9.6 are refused naming the version and the way out', () => {
  for (const ok of [MIN_SERVER_VERSION_NUM, 150020, 160004, 170000, 180001]) checkServerVersionNum(ok);
  for (const [num, name] of [
    [149999, 'PostgreSQL 14.9999'],
    [140011, 'PostgreSQL 14.11'],
    [130016, 'PostgreSQL 13.16'],
    [90624, 'PostgreSQL 9.6.24'],
  ] as const) {
    assert.throws(
      () => checkServerVersionNum(num, 'PostgreSQL at db:5432'),
      (err: unknown) => {
        assert.ok(err instanceof ServerVersionError);
        assert.ok(
          err.message.startsWith(`PostgreSQL at db:5432 runs ${name} (server_version_num ${num})`),
          err.message,
        );
        assert.match(err.message, /needs PostgreSQL 15 or later/);
        assert.match(err.message, /SWITCHBOARD_DATABASE_URL/);
        return true;
      },
    );
  }
});

test('an unreadable version is refused rather than let through', () => {
  for (const bad of [Number.NaN, 0, -1, 1.5]) {
    assert.throws(() => checkServerVersionNum(bad), /could not read server_version_num/);
  }
});

test('checkServerVersion asks the server for server_version_num and refuses a fake 14', async () => {
  const old = fakeServer('140011');
  await assert.rejects(checkServerVersion(old, 'PostgreSQL at old:5432'), (err: unknown) => {
    assert.ok(err instanceof ServerVersionError);
    assert.match(err.message, /^PostgreSQL at old:5432 runs PostgreSQL 14\.11/);
    return true;
  });
  assert.deepEqual(old.seen, [`SELECT current_setting('server_version_num') AS v`]);
  assert.equal(await checkServerVersion(fakeServer('150007')), 150007);
});

test('the real server the tests run on passes, and reports what it is', async () => {
  const client = new pg.Client({ connectionString: adminUrl() });
  await client.connect();
  try {
    const num = await checkServerVersion(client);
    const shown = (await client.query<{ server_version_num: string }>('SHOW server_version_num')).rows[0]
      ?.server_version_num;
    assert.equal(num, Number(shown));
    assert.ok(num >= MIN_SERVER_VERSION_NUM);
  } finally {
    await client.end();
  }
});
