// Pins which errors count as "the database cannot be reached": those are retried at
// start and answered 503 `unavailable`; anything else stays a 500 / a failed start.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { databaseProblem, isDatabaseUnavailable, problemDetail } from '../../src/db/unavailable.js';

const coded = (code: string, message = code) => Object.assign(new Error(message), { code });

test('network failures, a server shutting down or starting, and node-postgres connection errors are unreachable', () => {
  for (const err of [
    coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5999'),
    coded('ECONNRESET'),
    coded('ENOTFOUND'),
    coded('57P01', 'terminating connection due to administrator command'),
    coded('57P03', 'the database system is starting up'),
    coded('08006'),
    new Error('Connection terminated unexpectedly'),
    new Error('timeout exceeded when trying to connect'),
    new AggregateError([coded('ECONNREFUSED'), coded('ECONNREFUSED')], ''),
    new Error('migration 0009 failed: boom', { cause: coded('ECONNRESET') }),
  ]) {
    assert.equal(databaseProblem(err), 'database_unreachable', String(err));
  }
});

test('authentication and a missing database are rejected; statement errors and bugs are neither', () => {
  assert.equal(databaseProblem(coded('28P01', 'password authentication failed')), 'database_rejected');
  assert.equal(databaseProblem(coded('3D000', 'database "x" does not exist')), 'database_rejected');
  for (const err of [coded('23505'), coded('42P01'), new TypeError('x is undefined'), 'a string', null]) {
    assert.equal(isDatabaseUnavailable(err), false, String(err));
  }
});

test('the detail never carries a connection URL', () => {
  const detail = problemDetail(new Error('cannot reach postgres://u:secret@db:5432/x'));
  assert.doesNotMatch(detail, /secret/);
  assert.equal(
    problemDetail(new AggregateError([coded('ECONNREFUSED', 'connect ECONNREFUSED ::1:5432')], '')),
    'connect ECONNREFUSED ::1:5432',
  );
});
