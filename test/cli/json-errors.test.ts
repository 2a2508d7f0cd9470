// Pins what a failing command prints under --json: one JSON object on stderr,
// `{"error":{code,message,field?}}`, with the same exit code as the line it prints
// without --json — for a bad flag value, commander's own usage errors, an unreachable
// server and an error the API answered. Runs the compiled CLI against a throwaway HTTP
// server; no Switchboard server, no database.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ApiError } from '../../src/cli/client.js';
import { CliError, EXIT, errorOutput, wantsJson } from '../../src/cli/exit.js';
import { runCli } from '../helpers/cli.js';

let api: Server;
let apiUrl = '';
let home = '';

before(async () => {
  home = await mkdtemp(join(tmpdir(), 'switchboard-json-errors-'));
  // Every request is answered as the API answers an unknown endpoint.
  api = createServer((_req, res) => {
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: { code: 'not_found', message: 'endpoint ghost: not found' } }));
  });
  await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
  const address = api.address();
  apiUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});

after(async () => {
  api.close();
  await rm(home, { recursive: true, force: true });
});

const env = () => ({ HOME: home, SWITCHBOARD_TOKEN: 'sbt_test' });

/** The one JSON object a failed --json command wrote on stderr. */
function jsonError(stderr: string): { code: string; message: string; field?: string } {
  const lines = stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stderr, got: ${stderr}`);
  const parsed = JSON.parse(lines[0]!) as { error: { code: string; message: string; field?: string } };
  assert.deepEqual(Object.keys(parsed), ['error']);
  return parsed.error;
}

test('a bad flag value: invalid_argument naming the flag, exit 2, the same message as the line', async () => {
  const args = ['todo', 'list', 'ep', '--limit', 'lots', '--url', apiUrl];
  const json = await runCli([...args, '--json'], env());
  assert.equal(json.code, EXIT.usage);
  assert.equal(json.stdout, '');
  const error = jsonError(json.stderr);
  assert.deepEqual(error, { code: 'invalid_argument', message: error.message, field: '--limit' });
  const plain = await runCli(args, env());
  assert.equal(plain.code, EXIT.usage);
  assert.equal(plain.stderr, `switchboard: ${error.message}\n`);
});

test("commander's usage errors (unknown option, unknown command) are JSON too, with no help dump", async () => {
  const unknownOption = await runCli(['todo', 'list', 'ep', '--bogus', '--json'], env());
  assert.equal(unknownOption.code, EXIT.usage);
  const error = jsonError(unknownOption.stderr);
  assert.equal(error.code, 'invalid_argument');
  assert.equal(error.field, '--bogus');
  assert.match(error.message, /unknown option '--bogus'/);

  const unknownCommand = await runCli(['frobnicate', '--json'], env());
  assert.equal(unknownCommand.code, EXIT.usage);
  assert.match(jsonError(unknownCommand.stderr).message, /unknown command 'frobnicate'/);
  // Without --json the root help still follows the line.
  const plain = await runCli(['frobnicate'], env());
  assert.match(plain.stderr, /unknown command 'frobnicate'[\s\S]*Usage: switchboard/);
});

test('an API error keeps its code and exit 1; an unreachable server is unavailable', async () => {
  const answered = await runCli(['todo', 'list', 'ghost', '--url', apiUrl, '--json'], env());
  assert.equal(answered.code, EXIT.failure);
  assert.deepEqual(jsonError(answered.stderr), {
    code: 'not_found',
    message: 'endpoint ghost: not found (not_found)',
  });

  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const address = closed.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise((resolve) => closed.close(resolve));
  const refused = await runCli(['endpoint', 'list', '--url', `http://127.0.0.1:${port}`, '--json'], env());
  assert.equal(refused.code, EXIT.failure);
  const error = jsonError(refused.stderr);
  assert.equal(error.code, 'unavailable');
  assert.match(error.message, /cannot connect to http:\/\/127\.0\.0\.1:\d+ \(connection refused\)/);
});

test('errorOutput: the API field, a leading flag or variable, nothing for a failure without one', () => {
  const api = new ApiError('queue: too long (invalid_argument)', 'invalid_argument', 400, { field: 'queue' });
  assert.deepEqual(JSON.parse(errorOutput(api, true)), {
    error: { code: 'invalid_argument', message: 'queue: too long (invalid_argument)', field: 'queue' },
  });
  const variable = new CliError('SWITCHBOARD_URL: "x" is not a URL', EXIT.usage);
  assert.equal(
    (JSON.parse(errorOutput(variable, true)) as { error: { field: string } }).error.field,
    'SWITCHBOARD_URL',
  );
  const failed = new CliError('the self-test did not pass:\n  no stream');
  assert.deepEqual(JSON.parse(errorOutput(failed, true)), {
    error: { code: 'failed', message: 'the self-test did not pass: no stream' },
  });
  assert.equal(errorOutput(failed, false), 'switchboard: the self-test did not pass: no stream\n');
  assert.deepEqual(JSON.parse(errorOutput(new Error('boom'), true)), { error: { code: 'failed', message: 'boom' } });
});

test('wantsJson reads --json before a lone --, not after it', () => {
  assert.equal(wantsJson(['node', 'switchboard', 'todo', 'list', '--json']), true);
  assert.equal(wantsJson(['node', 'switchboard', 'todo', 'list']), false);
  assert.equal(wantsJson(['node', 'switchboard', 'todo', 'push', '--', '--json']), false);
});
