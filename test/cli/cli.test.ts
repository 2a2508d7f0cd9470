// Pins the API commands' client side without a Switchboard server: the credentials file
// (0600, round trip), the CLI environment, flag checks that name their flag, output
// formatting, the fetch client's error mapping, and usage errors as one stderr line.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile, mkdir } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { cliEnvFrom } from '../../src/config/cli.js';
import { ApiError, apiClient, normalizeUrl } from '../../src/cli/client.js';
import { credentialsPath, deleteCredentials, loadCredentials, saveCredentials } from '../../src/cli/credentials.js';
import { connectTemplates, rotateBody, vendBody } from '../../src/cli/endpoint.js';
import { CliError, EXIT } from '../../src/cli/exit.js';
import { futureTime, jsonValue, oneOf, queueName, wholeNumber } from '../../src/cli/flags.js';
import { clean, keyValues, table, text } from '../../src/cli/output.js';
import { listQuery, pushBody, type PushOptions } from '../../src/cli/todo.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/switchboard.js');
const scratch: string[] = [];
const servers: Server[] = [];

after(async () => {
  for (const server of servers) server.close();
  for (const dir of scratch) await rm(dir, { recursive: true, force: true });
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-cli-test-'));
  scratch.push(dir);
  return dir;
}

/** Asserts that `fn` throws a CliError with this exit code whose message matches. */
async function rejectsWith(fn: () => unknown, exitCode: number, message: RegExp | string): Promise<void> {
  await assert.rejects(
    async () => fn(),
    (err: unknown) => {
      assert.ok(err instanceof CliError, `a CliError, got ${String(err)}`);
      assert.equal(err.exitCode, exitCode, err.message);
      if (typeof message === 'string') assert.equal(err.message, message);
      else assert.match(err.message, message);
      return true;
    },
  );
}

/** A throwaway HTTP server answering `status` and `body` and recording what it got. */
async function fakeServer(
  status: number,
  body: string,
  headers: Record<string, string> = { 'content-type': 'application/json' },
): Promise<{ url: string; seen: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string }[] }> {
  const seen: { method?: string; url?: string; headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let received = '';
    req.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
    req.on('end', () => {
      seen.push({ method: req.method, url: req.url, headers: req.headers, body: received });
      res.writeHead(status, headers).end(body);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { url: `http://127.0.0.1:${port}`, seen };
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  return typeof address === 'object' && address ? address.port : 0;
}

/** Runs the real CLI with only the given SWITCHBOARD_* and config variables. */
async function runCli(
  args: string[],
  vars: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_') && k !== 'XDG_CONFIG_HOME'),
  );
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...env, ...vars } });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end();
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  return { code, stdout, stderr };
}

test('the credentials file is written 0600 in a 0700 directory and reads back what was saved', async () => {
  const configDir = await tempDir();
  assert.equal(await loadCredentials(configDir), null);
  const path = await saveCredentials(configDir, { url: 'http://127.0.0.1:8080', token: 'sbt_secret' });
  assert.equal(path, join(configDir, 'switchboard', 'credentials.json'));
  assert.equal((await stat(path)).mode & 0o777, 0o600);
  assert.equal((await stat(join(configDir, 'switchboard'))).mode & 0o777, 0o700);
  assert.deepEqual(await loadCredentials(configDir), { url: 'http://127.0.0.1:8080', token: 'sbt_secret' });
  assert.equal(await deleteCredentials(configDir), true);
  assert.equal(await deleteCredentials(configDir), false);
  assert.equal(await loadCredentials(configDir), null);
});

test('saving over a world-readable file and directory leaves them 0600 and 0700', async () => {
  const configDir = await tempDir();
  await mkdir(join(configDir, 'switchboard'), { mode: 0o755 });
  await writeFile(credentialsPath(configDir), '{}', { mode: 0o644 });
  await saveCredentials(configDir, { url: 'http://a.example', token: 'sbt_new' });
  assert.equal((await stat(credentialsPath(configDir))).mode & 0o777, 0o600);
  assert.equal((await stat(join(configDir, 'switchboard'))).mode & 0o777, 0o700);
  assert.deepEqual(JSON.parse(await readFile(credentialsPath(configDir), 'utf8')), {
    url: 'http://a.example',
    token: 'sbt_new',
  });
});

test('a damaged credentials file is an error naming the file, not a crash', async () => {
  const configDir = await tempDir();
  await mkdir(join(configDir, 'switchboard'));
  for (const content of ['not json', '{"url": "http://x"}', 'null']) {
    await writeFile(credentialsPath(configDir), content);
    await rejectsWith(() => loadCredentials(configDir), EXIT.failure, /credentials\.json is not a saved login/);
  }
});

test('the CLI environment: XDG_CONFIG_HOME, else HOME/.config, and the URL and token overrides', () => {
  assert.deepEqual(cliEnvFrom({ XDG_CONFIG_HOME: '/x/cfg', HOME: '/home/a' }, '/fallback'), {
    url: null,
    token: null,
    configDir: '/x/cfg',
  });
  assert.equal(cliEnvFrom({ HOME: '/home/a' }, '/fallback').configDir, '/home/a/.config');
  assert.equal(cliEnvFrom({ XDG_CONFIG_HOME: 'relative', HOME: '' }, '/fallback').configDir, '/fallback/.config');
  const env = cliEnvFrom({ SWITCHBOARD_URL: ' http://h:1 ', SWITCHBOARD_TOKEN: 'sbt_x' }, '/f');
  assert.equal(env.url, 'http://h:1');
  assert.equal(env.token, 'sbt_x');
  assert.equal(cliEnvFrom({ SWITCHBOARD_URL: '', SWITCHBOARD_TOKEN: ' ' }, '/f').token, null);
});

test('URLs are normalised and anything but http(s) is refused naming its source', async () => {
  assert.equal(normalizeUrl('http://127.0.0.1:8080/', '--url'), 'http://127.0.0.1:8080');
  assert.equal(normalizeUrl('https://sb.example/prefix/', '--url'), 'https://sb.example/prefix');
  await rejectsWith(() => normalizeUrl('127.0.0.1:8080', '--url'), EXIT.usage, /^--url: /);
  await rejectsWith(() => normalizeUrl('ftp://x', 'SWITCHBOARD_URL'), EXIT.usage, /^SWITCHBOARD_URL: /);
});

test('flag values are checked before any request, each error naming its flag (exit 2)', async () => {
  await rejectsWith(
    () => wholeNumber('--max-attempts', '0', 1, 100),
    EXIT.usage,
    '--max-attempts: must be a whole number from 1 to 100',
  );
  for (const bad of ['101', '2.5', 'x', '', '-1', '1e2'])
    await rejectsWith(() => wholeNumber('--max-attempts', bad, 1, 100), EXIT.usage, /^--max-attempts: /);
  assert.equal(wholeNumber('--limit', '200', 1, 200), 200);
  await rejectsWith(() => jsonValue('--payload', '{"a":'), EXIT.usage, '--payload: not valid JSON');
  assert.deepEqual(jsonValue('--payload', '{"a":[1]}'), { a: [1] });
  await rejectsWith(() => queueName('--queue', 'Inbox'), EXIT.usage, /^--queue: "Inbox" is not a queue name/);
  await rejectsWith(() => oneOf('--state', 'done!', ['done', 'failed']), EXIT.usage, /^--state: must be one of/);
  await rejectsWith(() => futureTime('--expires-at', 'tomorrow'), EXIT.usage, /^--expires-at: "tomorrow" is not/);
  await rejectsWith(() => futureTime('--expires-at', '2001-01-01T00:00:00Z'), EXIT.usage, /in the past/);
  assert.equal(futureTime('--expires-at', '2999-01-31T19:00:00+01:00'), '2999-01-31T18:00:00.000Z');
});

test('todo push builds its body from the flags and refuses --body with --body-file', async () => {
  const base: PushOptions = { title: 'Review PR 7', queue: 'inbox' };
  assert.deepEqual(await pushBody(base), { queue: 'inbox', title: 'Review PR 7' });
  const dir = await tempDir();
  await writeFile(join(dir, 'body.md'), 'line 1\nline 2\n');
  assert.deepEqual(
    await pushBody({
      ...base,
      queue: 'reviews',
      bodyFile: join(dir, 'body.md'),
      payload: '{"pr":7}',
      kind: 'review',
      idempotencyKey: 'pr-7',
      maxAttempts: '3',
    }),
    {
      queue: 'reviews',
      title: 'Review PR 7',
      body: 'line 1\nline 2\n',
      payload: { pr: 7 },
      kind: 'review',
      idempotency_key: 'pr-7',
      max_attempts: 3,
    },
  );
  await rejectsWith(() => pushBody({ ...base, body: 'a', bodyFile: 'b' }), EXIT.usage, /^--body and --body-file: /);
  await rejectsWith(() => pushBody({ ...base, bodyFile: join(dir, 'missing') }), EXIT.usage, /^--body-file: .*ENOENT/);
  await rejectsWith(() => pushBody({ ...base, title: ' ' }), EXIT.usage, '--title: must not be empty');
  await rejectsWith(() => pushBody({ ...base, title: 'x'.repeat(201) }), EXIT.usage, /^--title: longer than 200/);
  await rejectsWith(() => pushBody({ ...base, payload: 'nope' }), EXIT.usage, '--payload: not valid JSON');
});

test('endpoint rotate sends --grace in whole seconds, and refuses one outside 0s–7d naming it', async () => {
  assert.deepEqual(rotateBody({}), {});
  assert.deepEqual(rotateBody({ grace: '0s' }), { grace_seconds: 0 });
  assert.deepEqual(rotateBody({ grace: '90m' }), { grace_seconds: 5400 });
  await rejectsWith(() => rotateBody({ grace: '8d' }), EXIT.usage, /^--grace: "8d" is not a duration from 0s to 7d/);
  await rejectsWith(() => rotateBody({ grace: 'soon' }), EXIT.usage, /^--grace: /);
});

test('todo list and endpoint vend turn their flags into the query and the body', async () => {
  assert.equal(listQuery({}), '');
  assert.equal(
    listQuery({ queue: 'inbox', state: 'failed', limit: '10', cursor: 'c 1' }),
    '?queue=inbox&state=failed&limit=10&cursor=c+1',
  );
  await rejectsWith(() => listQuery({ limit: '500' }), EXIT.usage, '--limit: must be a whole number from 1 to 200');
  assert.deepEqual(vendBody('reviewer', {}), { name: 'reviewer' });
  assert.deepEqual(vendBody('reviewer', { queue: ['inbox', 'prs'], verbs: 'drain, create', lease: '600' }), {
    name: 'reviewer',
    queues: ['inbox', 'prs'],
    verbs: ['drain', 'create'],
    default_lease_seconds: 600,
  });
  await rejectsWith(() => vendBody('r', { queue: [], lease: '2' }), EXIT.usage, /^--lease: .* from 5 to 86400/);
  assert.deepEqual(vendBody('r', { slug: 'night-shift' }), { name: 'r', slug: 'night-shift' });
  await rejectsWith(() => vendBody('r', { slug: 'Night_Shift' }), EXIT.usage, /^--slug: "Night_Shift" must be 3–63/);
  await rejectsWith(() => vendBody('r', { queue: [], verbs: 'drain,,create' }), EXIT.usage, /^--verbs: /);
});

test('tables align their columns, cut long cells, and say so when empty', () => {
  const rows = [
    { id: 'td_1', state: 'pending', title: 'short' },
    { id: 'td_22', state: 'failed', title: 'a rather long title that goes on' },
  ];
  const out = table(rows, [
    { header: 'ID', value: (r) => r.id },
    { header: 'STATE', value: (r) => r.state },
    { header: 'TITLE', value: (r) => r.title, max: 10 },
  ]);
  assert.equal(out, ['ID     STATE    TITLE', 'td_1   pending  short', 'td_22  failed   a rather …', ''].join('\n'));
  assert.equal(table([], [{ header: 'ID', value: () => 1 }], 'no todos'), 'no todos\n');
});

test('key/value blocks pad keys, continue multi-line values, and show nothing as "-"', () => {
  assert.equal(
    keyValues([
      ['id', 'td_1'],
      ['lease expires', null],
      ['body', 'one\ntwo'],
      ['queues', ['inbox', 'prs']],
      ['created', '2030-01-31T18:00:00.123Z'],
    ]),
    [
      'id             td_1',
      'lease expires  -',
      'body           one',
      '               two',
      'queues         inbox,prs',
      'created        2030-01-31 18:00:00Z',
      '',
    ].join('\n'),
  );
});

test('text from the server cannot drive the terminal: control and bidi characters are escaped', () => {
  assert.equal(clean('a\u001b[31mred\u0007'), 'a\\x1b[31mred\\x07');
  assert.equal(clean('tab\there\nnext'), 'tab\\there\\nnext');
  assert.equal(clean('one\ntwo', true), 'one\ntwo');
  assert.equal(clean('\u202eevil'), '\\u202eevil');
  assert.equal(text({ a: 1 }), '{"a":1}');
  assert.equal(text(''), '-');
});

test('endpoint connect templates point at <url>/mcp with a placeholder credential', () => {
  const t = connectTemplates('http://127.0.0.1:8080', 'reviewer', '<CREDENTIAL>');
  assert.equal(t.mcp_url, 'http://127.0.0.1:8080/mcp');
  assert.match(t.claude_mcp_add, /^claude mcp add --transport http reviewer http:\/\/127\.0\.0\.1:8080\/mcp /);
  assert.deepEqual(t.mcp_json.mcpServers.reviewer?.headers, { Authorization: 'Bearer <CREDENTIAL>' });
});

test('the client sends a bearer token and JSON, and maps an error answer to its code and message', async () => {
  const server = await fakeServer(
    404,
    JSON.stringify({ error: { code: 'not_found', message: 'endpoint nope not found', details: { id: 'nope' } } }),
  );
  const client = apiClient(server.url, 'sbt_t');
  await assert.rejects(
    () => client.request('POST', '/api/v1/x', { a: 1 }),
    (err: unknown) => {
      assert.ok(err instanceof ApiError);
      assert.equal(err.code, 'not_found');
      assert.equal(err.status, 404);
      assert.equal(err.exitCode, EXIT.failure);
      assert.equal(err.message, 'endpoint nope not found (not_found)');
      assert.deepEqual(err.details, { id: 'nope' });
      return true;
    },
  );
  assert.equal(server.seen[0]?.headers.authorization, 'Bearer sbt_t');
  assert.equal(server.seen[0]?.headers['content-type'], 'application/json');
  assert.equal(server.seen[0]?.body, '{"a":1}');
});

test('a rejected field exits 2, a refused token says to sign in again, and a non-JSON answer is named', async () => {
  const invalid = await fakeServer(
    400,
    JSON.stringify({ error: { code: 'invalid_argument', message: 'title: too long' } }),
  );
  await rejectsWith(
    () => apiClient(invalid.url, 't').request('GET', '/'),
    EXIT.usage,
    'title: too long (invalid_argument)',
  );
  const refused = await fakeServer(
    401,
    JSON.stringify({ error: { code: 'unauthenticated', message: 'token revoked' } }),
  );
  await rejectsWith(
    () => apiClient(refused.url, 't').request('GET', '/'),
    EXIT.failure,
    `token revoked (unauthenticated): sign in again with \`switchboard login --url ${refused.url}\``,
  );
  const html = await fakeServer(502, '<html>bad gateway</html>', { 'content-type': 'text/html' });
  await rejectsWith(() => apiClient(html.url, 't').request('GET', '/x'), EXIT.failure, /HTTP 502 and no JSON/);
});

test('connection refused is one line naming the URL and suggesting serve or --url', async () => {
  const url = `http://127.0.0.1:${await freePort()}`;
  await rejectsWith(
    () => apiClient(url, null).request('GET', '/healthz'),
    EXIT.failure,
    `cannot connect to ${url} (connection refused): start the server with \`switchboard serve\` or point at it with --url`,
  );
});

test('a bad flag exits 2 with one stderr line naming it and prints nothing on stdout', async () => {
  const config = await tempDir();
  const cases: [string[], RegExp][] = [
    [['todo', 'push', 'agent', '--title', 't', '--max-attempts', '0'], /--max-attempts: must be a whole number/],
    [['todo', 'push', 'agent', '--title', 't', '--payload', '{'], /--payload: not valid JSON/],
    [['todo', 'push', 'agent', '--title', 't', '--max-atempts', '3'], /unknown option '--max-atempts'.*--max-attempts/],
    [['todo', 'list'], /missing required argument 'ENDPOINT'/],
    [['endpoint', 'vend', 'x', '--lease', 'soon'], /--lease: must be a whole number/],
    [['webhook', 'create', 'agent', '--queue', 'Bad Queue'], /--queue: "Bad Queue" is not a queue name/],
    [
      ['webhook', 'create', 'agent', '--queue', 'inbox', '--provider', 'bitbucket'],
      /--provider: must be one of token, github/,
    ],
    [['event', 'list', 'agent', '--limit', '0'], /--limit: /],
    [['event', 'show'], /missing required argument 'ID'/],
    [['whoami', '--url', 'localhost:8080'], /--url: /],
  ];
  for (const [args, pattern] of cases) {
    const { code, stdout, stderr } = await runCli(args, { XDG_CONFIG_HOME: config });
    assert.equal(code, 2, `${args.join(' ')}: ${stderr}`);
    assert.equal(stdout, '');
    assert.equal(stderr.split('\n').length, 2, `one line: ${stderr}`);
    assert.match(stderr, /^switchboard: /);
    assert.match(stderr, pattern);
  }
});

test('without a login the API commands exit 1 saying how to sign in', async () => {
  const config = await tempDir();
  const { code, stdout, stderr } = await runCli(['endpoint', 'list', '--json'], { XDG_CONFIG_HOME: config });
  assert.equal(code, 1);
  assert.equal(stdout, '');
  // Under --json the same failure is the error object (test/cli/json-errors.test.ts).
  assert.deepEqual(JSON.parse(stderr), {
    error: { code: 'failed', message: 'not signed in: run `switchboard login --url http://127.0.0.1:8080`' },
  });
  const plain = await runCli(['endpoint', 'list'], { XDG_CONFIG_HOME: config });
  assert.equal(plain.code, 1);
  assert.equal(plain.stderr, 'switchboard: not signed in: run `switchboard login --url http://127.0.0.1:8080`\n');
});

test('the saved token is never sent to a server other than the one it came from', async () => {
  const config = await tempDir();
  await saveCredentials(config, { url: 'http://127.0.0.1:9', token: 'sbt_for_the_other_server' });
  const stranger = await fakeServer(200, '{"endpoints":[]}');
  const { code, stderr } = await runCli(['endpoint', 'list', '--url', stranger.url], { XDG_CONFIG_HOME: config });
  assert.equal(code, 1);
  assert.equal(stderr, `switchboard: not signed in: run \`switchboard login --url ${stranger.url}\`\n`);
  assert.equal(stranger.seen.length, 0);
  const withToken = await runCli(['endpoint', 'list', '--url', stranger.url, '--json'], {
    XDG_CONFIG_HOME: config,
    SWITCHBOARD_TOKEN: 'sbt_env',
  });
  assert.equal(withToken.code, 0, withToken.stderr);
  assert.deepEqual(JSON.parse(withToken.stdout), { endpoints: [] });
  assert.equal(stranger.seen[0]?.headers.authorization, 'Bearer sbt_env');
});
