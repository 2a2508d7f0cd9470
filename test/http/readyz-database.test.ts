// /readyz while the database cannot be reached (docs/design/scale.md): the body names the
// reason and says only "database unavailable"; the error, with its host and port, goes to
// the log at warn.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { createHost } from '../../src/http/app.js';
import { healthRoutes } from '../../src/http/health.js';
import { Readiness } from '../../src/http/readiness.js';

/** The defaults of the config (SWITCHBOARD_REQUEST_TIMEOUT and the rest). */
const CONNECTIONS = { requestTimeoutMs: 60_000, headersTimeoutMs: 10_000, maxPerAddress: 256 };

function refusingDatabase() {
  return {
    query: () =>
      Promise.reject(
        Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:5999'), {
          code: 'ECONNREFUSED',
          address: '10.1.2.3',
          port: 5999,
        }),
      ),
  };
}

test('/readyz with the database unreachable answers 503 "database unavailable" and logs the error at warn', async () => {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const app = createHost({
    log: pino({ level: 'warn' }, sink),
    trustProxy: [],
    allowedHosts: null,
    connections: CONNECTIONS,
  });
  healthRoutes(app, {
    pool: refusingDatabase() as never,
    migrations: [],
    version: { version: 'test' } as never,
    readiness: new Readiness(),
  });
  try {
    const res = await app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 503);
    const body = res.json<Record<string, unknown>>();
    assert.equal(body.status, 'unavailable');
    assert.equal(body.reason, 'database_unreachable');
    assert.equal(body.detail, 'database unavailable');
    assert.doesNotMatch(res.body, /ECONNREFUSED|10\.1\.2\.3|5999/);
    const warned = lines.find((l) => l.msg === 'readiness check: database unavailable');
    assert.ok(warned, JSON.stringify(lines));
    assert.equal(warned.level, 40);
    assert.match(String(warned.detail), /ECONNREFUSED 10\.1\.2\.3:5999/);
  } finally {
    await app.close();
  }
});

test('a start-sequence database problem shows the same fixed detail, never its error text', () => {
  const readiness = new Readiness();
  readiness.markNotReady('database_rejected', 'password authentication failed for user "sb" at db.internal:5432');
  assert.equal(readiness.body().detail, 'database unavailable');
  readiness.markNotReady('migrations_pending', 'migration 0014_work_model.sql is not applied');
  assert.equal(readiness.body().detail, 'migration 0014_work_model.sql is not applied');
});
