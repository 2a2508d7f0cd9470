// Pins what the JSON log never carries: the secret-named fields and the request's
// Authorization and Cookie headers come out redacted, and the first-run setup link is
// handed to the caller (serve prints it to stderr), not written into the log.

import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { parseConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/http/logger.js';
import { startServer } from '../../src/main.js';
import { testDatabase } from '../helpers/db.js';

function capture(): { lines: string[]; sink: Writable } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, sink };
}

test('secret-named fields at the top level and one level down, and auth headers, are logged as [Redacted]', async () => {
  const { lines, sink } = capture();
  const log = createLogger('info', sink);
  log.info(
    {
      token: 't-1',
      password: 'p-1',
      credential: 'c-1',
      secret: 's-1',
      hook: { secret: 's-2', token: 't-2', url: 'https://hooks.example.com/x' },
      req: { method: 'GET', headers: { authorization: 'Bearer sb_live_x', cookie: 'sb_session=abc', host: 'h' } },
      endpoint: 'kept',
    },
    'with secrets',
  );
  await new Promise((r) => setImmediate(r));
  assert.equal(lines.length, 1, lines.join('\n'));
  const line = JSON.parse(lines[0] ?? '{}');
  for (const field of ['token', 'password', 'credential', 'secret']) assert.equal(line[field], '[Redacted]', field);
  assert.deepEqual(line.hook, { secret: '[Redacted]', token: '[Redacted]', url: 'https://hooks.example.com/x' });
  assert.deepEqual(line.req.headers, { authorization: '[Redacted]', cookie: '[Redacted]', host: 'h' });
  assert.equal(line.endpoint, 'kept', 'other fields are untouched');
  for (const secret of ['t-1', 'p-1', 'c-1', 's-1', 's-2', 't-2', 'sb_live_x', 'abc'])
    assert.ok(!lines[0]?.includes(secret), secret);
});

test('with no humans yet the server hands back the setup link and its log carries only a non-secret line', async () => {
  const db = await testDatabase('log_secrets');
  const parsed = parseConfig({
    SWITCHBOARD_DATABASE_URL: db.url,
    SWITCHBOARD_LISTEN: '127.0.0.1:0',
    SWITCHBOARD_INSTANCE_ID: 'log-secrets',
    SWITCHBOARD_DB_POOL_SIZE: '2',
  });
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.problems.join('; '));
  const { lines, sink } = capture();
  const server = await startServer(parsed.config, createLogger('info', sink));
  after(() => server.stop());
  const token = /\/setup\/([A-Za-z0-9_-]+)$/.exec(server.setupUrl ?? '')?.[1];
  assert.ok(token, `a setup link: ${server.setupUrl}`);
  await new Promise((r) => setImmediate(r));
  assert.ok(
    lines.some((l) => /no humans yet/.test(l)),
    lines.join('\n'),
  );
  for (const l of lines) assert.ok(!l.includes(token) && !l.includes('/setup/'), l);
});
