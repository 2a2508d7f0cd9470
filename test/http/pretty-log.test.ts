// Pins the readable log format `serve` writes on a terminal (SWITCHBOARD_LOG_FORMAT,
// src/http/logger.ts): one line per event — time, level, message, then the fields — an
// error's stack below it, secrets still redacted, and the choice between the formats.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLogger, prettyDestination, prettyLine, wantsPretty } from '../../src/http/logger.js';

test('a JSON line becomes time, level, message and key=value fields; quiet fields are left out', () => {
  const line = JSON.stringify({
    level: 'info',
    time: '2026-12-05T12:04:05.123Z',
    pid: 7,
    hostname: 'box',
    msg: 'switchboard 1.0.0 listening',
    url: 'http://127.0.0.1:8080',
    data: 'embedded PostgreSQL in ./.switchboard',
    applied: ['0001', '0002'],
    n: 3,
  });
  assert.equal(
    prettyLine(line),
    '12:04:05.123 INFO  switchboard 1.0.0 listening url=http://127.0.0.1:8080 ' +
      'data="embedded PostgreSQL in ./.switchboard" applied=["0001","0002"] n=3\n',
  );
});

test("an error shows its message as a field and its stack indented below; a line that isn't JSON passes through", () => {
  const err = {
    type: 'Error',
    message: 'connect ECONNREFUSED',
    stack: 'Error: connect ECONNREFUSED\n    at a (x.js:1)',
  };
  assert.equal(
    prettyLine(JSON.stringify({ level: 'error', time: '2026-12-05T12:04:05.123Z', msg: 'start failed', err })),
    '12:04:05.123 ERROR start failed err="connect ECONNREFUSED"\n    at a (x.js:1)\n',
  );
  assert.equal(prettyLine('not json\n'), 'not json\n');
  assert.equal(prettyLine(JSON.stringify({ level: 'warn', msg: 'w' }), true), '\u001b[33mWARN \u001b[0m w\n');
});

test('the pretty destination keeps redaction, and auto means pretty only on a terminal', () => {
  const out: string[] = [];
  const sink = { write: (chunk: string) => out.push(chunk) > 0, isTTY: false } as unknown as NodeJS.WritableStream;
  const log = createLogger('info', prettyDestination(sink));
  log.info({ token: 'sbt_secret', queue: 'default' }, 'minted');
  assert.equal(out.length, 1);
  assert.match(out[0]!, /^\d\d:\d\d:\d\d\.\d{3} INFO {2}minted token=\[Redacted\] queue=default\n$/);
  assert.ok(!out[0]!.includes('sbt_secret'));

  assert.equal(wantsPretty('auto', { isTTY: true }), true);
  assert.equal(wantsPretty('auto', { isTTY: false }), false);
  assert.equal(wantsPretty('auto', {}), false);
  assert.equal(wantsPretty('json', { isTTY: true }), false);
  assert.equal(wantsPretty('pretty', { isTTY: false }), true);
});
