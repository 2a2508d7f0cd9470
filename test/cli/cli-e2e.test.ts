// Pins the API commands end to end against a real `serve` on a fresh database, with auth
// on: the first admin made through the setup URL the server prints, then login (password
// on stdin), whoami, endpoint vend/list/show/connect, todo push/list/show/cancel/retry,
// webhooks, revoke dead-lettering the live todos, delete, logout; every command's --json
// parses as JSON, and a bad flag exits 2 with one stderr line.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { emptyDatabase } from '../helpers/db.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/switchboard.js');
const READY_TIMEOUT_MS = 120_000;
const EMAIL = 'ada@example.test';
const PASSWORD = 'correct horse battery staple';

// The JSON answers, as far as the assertions read them.
interface Human {
  email: string;
  role: string;
}
interface Endpoint {
  id: string;
  slug: string;
  name: string;
  state: string;
  queues: string[];
  default_lease_seconds: number | null;
  accept_agent_messages: boolean;
}
interface Todo {
  id: string;
  queue: string;
  state: string;
  max_attempts: number;
  error: unknown;
}
interface Webhook {
  id: string;
}
type TodoAnswer = { todo: Todo; created: boolean; attempts: unknown[] };
type WebhookAnswer = { webhook: Webhook; url: string };

let server: ChildProcess | null = null;
let serverOut = '';
let base = '';
let configHome = '';

/** The environment without any SWITCHBOARD_* or XDG variable of ours, plus `vars`. */
function envWith(vars: Record<string, string>): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('SWITCHBOARD_') && !k.startsWith('XDG_')),
  );
  return { ...env, ...vars };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Runs one CLI command as its own process, as a person would, with `input` on stdin. */
async function sb(args: string[], input = ''): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: envWith({ XDG_CONFIG_HOME: configHome }),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdin.end(input);
  const code = await new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  return { code, stdout, stderr };
}

/** Runs a command with --json, asserts exit 0 and one JSON document on stdout, returns it. */
async function sbJson<T = Record<string, unknown>>(args: string[], input = ''): Promise<T> {
  const { code, stdout, stderr } = await sb([...args, '--json'], input);
  assert.equal(code, 0, `${args.join(' ')} exits 0; stderr: ${stderr}`);
  assert.equal(stdout.trim().split('\n').length, 1, `${args.join(' ')}: one line of JSON`);
  return JSON.parse(stdout) as T;
}

/** Runs a command for people, asserts exit 0, returns stdout. */
async function sbText(args: string[]): Promise<string> {
  const { code, stdout, stderr } = await sb(args);
  assert.equal(code, 0, `${args.join(' ')} exits 0; stderr: ${stderr}`);
  return stdout;
}

// Stops serve before the database is dropped: after hooks run in the order registered.
after(stopServer);
// Created at the top level so that its drop hook belongs to the file, not to a hook.
const databaseUrl = await emptyDatabase('cli_e2e');

before(async () => {
  configHome = await mkdtemp(join(tmpdir(), 'switchboard-cli-e2e-'));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  server = spawn(process.execPath, [BIN, 'serve'], {
    cwd: ROOT,
    env: envWith({ SWITCHBOARD_DATABASE_URL: databaseUrl, SWITCHBOARD_LISTEN: `127.0.0.1:${port}` }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  server.stdout?.setEncoding('utf8').on('data', (chunk: string) => (serverOut += chunk));
  server.stderr?.setEncoding('utf8').on('data', (chunk: string) => (serverOut += chunk));
  const deadline = Date.now() + READY_TIMEOUT_MS;
  for (;;) {
    if (server.exitCode !== null) throw new Error(`serve exited (${server.exitCode}): ${serverOut}`);
    const res = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) }).catch(() => null);
    if (res?.status === 200 && /\/setup\//.test(serverOut)) return;
    if (Date.now() > deadline) throw new Error(`serve not ready with a setup URL in time: ${serverOut}`);
    await new Promise((r) => setTimeout(r, 200));
  }
});

async function stopServer(): Promise<void> {
  if (server && server.exitCode === null) {
    const exited = new Promise((resolve) => server?.once('exit', resolve));
    server.kill('SIGTERM');
    const timer = setTimeout(() => server?.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
  if (configHome) await rm(configHome, { recursive: true, force: true });
}

/** The setup token from serve's plain stderr line; no JSON log line may carry it. */
function setupToken(): string {
  const lines = serverOut.split('\n');
  for (const line of lines) {
    const match = /^no humans yet: open \S+\/setup\/([A-Za-z0-9_-]+) within 1 hour/.exec(line);
    if (match?.[1]) {
      const token = match[1];
      const logged = lines.filter((l) => l.startsWith('{') && l.includes(token));
      assert.deepEqual(logged, [], 'the setup token is not in the JSON log');
      return token;
    }
  }
  throw new Error(`no setup URL line on serve's stderr: ${serverOut}`);
}

test(
  'the CLI signs in, vends an endpoint, pushes and inspects todos, and revoking dead-letters them',
  { timeout: 300_000 },
  async () => {
    const setup = await fetch(`${base}/api/v1/setup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: setupToken(), email: EMAIL, password: PASSWORD, display_name: 'Ada' }),
    });
    assert.equal(setup.status, 201, `${await setup.text()}\n${serverOut}`);

    const notYet = await sb(['whoami']);
    assert.equal(notYet.code, 1);
    assert.match(notYet.stderr, /^switchboard: not signed in: run `switchboard login --url .*`\n$/);

    const wrong = await sb(['login', '--url', base, '--email', EMAIL, '--password-stdin'], 'wrong password\n');
    assert.equal(wrong.code, 1, wrong.stderr);
    assert.match(wrong.stderr, /^switchboard: .*\(unauthenticated\)\n$/);

    const login = await sbJson<{ human: Human }>(
      ['login', '--url', base, '--email', EMAIL, '--password-stdin'],
      `${PASSWORD}\n`,
    );
    assert.equal(login.human.email, EMAIL);
    assert.equal(JSON.stringify(login).includes('sbt_'), false, 'the token is not printed');
    const file = join(configHome, 'switchboard', 'credentials.json');
    assert.equal((await stat(file)).mode & 0o777, 0o600);

    const me = await sbJson<{ human: Human }>(['whoami']);
    assert.equal(me.human.email, EMAIL);
    assert.equal(me.human.role, 'admin');
    assert.match(await sbText(['whoami']), new RegExp(`email\\s+${EMAIL}`));

    const vended = await sbJson<{ endpoint: Endpoint; credential: string }>([
      'endpoint',
      'vend',
      'reviewer',
      '--queue',
      'inbox',
      '--queue',
      'prs',
      '--lease',
      '600',
    ]);
    assert.match(vended.credential, /^sbk_/);
    assert.deepEqual(vended.endpoint.queues, ['inbox', 'prs']);
    assert.equal(vended.endpoint.default_lease_seconds, 600);
    const slug: string = vended.endpoint.slug;
    const human = await sbText(['endpoint', 'vend', 'second-agent', '--accept-agent-messages']);
    assert.match(human, /agent messages\s+accepted/);
    assert.match(human, /shown once/);
    assert.match(human, /sbk_/);
    assert.match(human, /claude mcp add/);

    const listed = await sbJson<{ endpoints: Endpoint[] }>(['endpoint', 'list']);
    assert.deepEqual(listed.endpoints.map((e) => e.name).sort(), ['reviewer', 'second-agent']);
    assert.match(
      await sbText(['endpoint', 'list']),
      new RegExp(`^SLUG .*\\n(.*\\n)*${slug}\\s+reviewer\\s+active`, 'm'),
    );
    const shown = await sbJson<{ endpoint: Endpoint; sessions: unknown }>(['endpoint', 'show', slug]);
    assert.equal(shown.endpoint.id, vended.endpoint.id);
    assert.ok(Array.isArray(shown.sessions));
    const connect = await sbJson<{ mcp_url: string }>(['endpoint', 'connect', slug]);
    assert.equal(connect.mcp_url, `${base}/mcp`);
    assert.match(await sbText(['endpoint', 'connect', slug]), /<CREDENTIAL>/);
    assert.equal(shown.endpoint.accept_agent_messages, false);
    const opened = await sbJson<{ endpoint: Endpoint }>(['endpoint', 'set', slug, '--accept-agent-messages', 'on']);
    assert.equal(opened.endpoint.accept_agent_messages, true);
    assert.match(await sbText(['endpoint', 'set', slug, '--accept-agent-messages', 'off']), /agent messages\s+refused/);
    const unnamed = await sb(['endpoint', 'set', slug]);
    assert.notEqual(unnamed.code, 0);
    assert.match(unnamed.stderr, /--accept-agent-messages/);
    const maybe = await sb(['endpoint', 'set', slug, '--accept-agent-messages', 'maybe']);
    assert.notEqual(maybe.code, 0);
    assert.match(maybe.stderr, /--accept-agent-messages: must be one of on, off/);

    // edit: name, lease and one more queue; the slug stays.
    const edited = await sbJson<{ endpoint: Endpoint & { name: string; default_lease_seconds: number | null } }>([
      'endpoint',
      'edit',
      slug,
      '--name',
      'Reviewer Two',
      '--lease',
      '600',
      '--add-queue',
      'triage',
    ]);
    assert.equal(edited.endpoint.slug, slug);
    assert.equal(edited.endpoint.name, 'Reviewer Two');
    assert.equal(edited.endpoint.default_lease_seconds, 600);
    assert.deepEqual(edited.endpoint.queues, [...vended.endpoint.queues, 'triage']);
    const cleared = await sbJson<{ endpoint: { default_lease_seconds: number | null } }>([
      'endpoint',
      'edit',
      slug,
      '--lease',
      'default',
    ]);
    assert.equal(cleared.endpoint.default_lease_seconds, null);
    const badQueue = await sb(['endpoint', 'edit', slug, '--add-queue', 'Bad Queue']);
    assert.equal(badQueue.code, 2);
    assert.match(badQueue.stderr, /^switchboard: --add-queue: "Bad Queue" is not a queue name/);
    // remove: an unused queue goes; one not granted is named by its flag.
    const removed = await sbJson<{ endpoint: Endpoint }>(['endpoint', 'edit', slug, '--remove-queue', 'triage']);
    assert.deepEqual(removed.endpoint.queues, vended.endpoint.queues);
    const notGranted = await sb(['endpoint', 'edit', slug, '--remove-queue', 'triage']);
    assert.equal(notGranted.code, 2, notGranted.stderr);
    assert.match(notGranted.stderr, /--remove-queue: "triage" is not one of/);

    // rotate: a new credential, the slug kept; with --grace 0s the old one stops at once.
    const rotation = await sbJson<{ credential: string; previous_valid_until: string | null; endpoint: Endpoint }>([
      'endpoint',
      'rotate',
      slug,
      '--grace',
      '0s',
    ]);
    assert.match(rotation.credential, /^sbk_/);
    assert.equal(rotation.endpoint.slug, slug);
    assert.equal(rotation.previous_valid_until, null);
    const rotationText = await sbText(['endpoint', 'rotate', slug]);
    assert.match(rotationText, new RegExp(`^rotated ${slug}: the old credential works until \\S+; the slug`));
    assert.match(rotationText, /New credential \(shown once/);

    const pushed = await sbJson<TodoAnswer>([
      'todo',
      'push',
      slug,
      '--title',
      'Review PR 7',
      '--payload',
      '{"pr":7}',
      '--idempotency-key',
      'pr-7',
    ]);
    assert.equal(pushed.created, true);
    assert.equal(pushed.todo.state, 'pending');
    assert.equal(pushed.todo.queue, 'inbox');
    const again = await sbJson<TodoAnswer>([
      'todo',
      'push',
      slug,
      '--title',
      'Review PR 7',
      '--idempotency-key',
      'pr-7',
    ]);
    assert.deepEqual([again.created, again.todo.id], [false, pushed.todo.id]);
    const other = await sbJson<TodoAnswer>([
      'todo',
      'push',
      slug,
      '--title',
      'Triage',
      '--queue',
      'prs',
      '--body',
      'look at it',
      '--max-attempts',
      '2',
    ]);
    assert.equal(other.todo.max_attempts, 2);

    const todos = await sbJson<{ todos: Todo[] }>(['todo', 'list', slug]);
    assert.deepEqual(todos.todos.map((t) => t.id).sort(), [pushed.todo.id, other.todo.id].sort());
    const prs = await sbJson<{ todos: Todo[] }>(['todo', 'list', slug, '--queue', 'prs', '--limit', '10']);
    assert.deepEqual(
      prs.todos.map((t) => t.id),
      [other.todo.id],
    );
    assert.match(await sbText(['todo', 'list', slug]), /Review PR 7/);

    const detail = await sbJson<TodoAnswer>(['todo', 'show', pushed.todo.id]);
    assert.equal(detail.todo.id, pushed.todo.id);
    assert.deepEqual(detail.attempts, []);
    assert.match(await sbText(['todo', 'show', pushed.todo.id]), /state\s+pending/);

    const canceled = await sbJson<TodoAnswer>(['todo', 'cancel', other.todo.id]);
    assert.equal(canceled.todo.state, 'canceled');
    const retried = await sbJson<TodoAnswer>(['todo', 'retry', other.todo.id]);
    assert.equal(retried.todo.state, 'pending');

    const hook = await sbJson<WebhookAnswer>(['webhook', 'create', slug, '--queue', 'inbox', '--name', 'github']);
    assert.match(hook.url, /\/webhooks\//);
    const hooks = await sbJson<{ webhooks: Webhook[] }>(['webhook', 'list', slug]);
    assert.deepEqual(
      hooks.webhooks.map((w) => w.id),
      [hook.webhook.id],
    );
    const rotated = await sbJson<WebhookAnswer>(['webhook', 'rotate', hook.webhook.id]);
    assert.notEqual(rotated.url, hook.url);
    assert.deepEqual(await sbJson(['webhook', 'delete', hook.webhook.id]), { deleted: true });

    // A GitHub webhook: a signed delivery becomes an event, listed, shown and replayed.
    const gh = await sbJson<WebhookAnswer & { secret: string }>([
      'webhook',
      'create',
      slug,
      '--queue',
      'inbox',
      '--provider',
      'github',
    ]);
    assert.match(gh.secret, /^whsec_/);
    const raw = JSON.stringify({
      action: 'opened',
      number: 3,
      pull_request: { number: 3, title: 'From the CLI test' },
      repository: { full_name: 'octo/cli' },
      sender: { login: 'ada' },
    });
    const delivered = await fetch(gh.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'pull_request',
        'x-github-delivery': 'cli-e2e-1',
        'x-hub-signature-256': `sha256=${createHmac('sha256', gh.secret).update(raw).digest('hex')}`,
      },
      body: raw,
    });
    assert.equal(delivered.status, 201, await delivered.clone().text());
    const events = await sbJson<{ events: { id: string; type: string; todo_ids: string[] }[] }>([
      'event',
      'list',
      slug,
      '--limit',
      '5',
    ]);
    const [received] = events.events;
    assert.equal(received?.type, 'pull_request.opened');
    const shownEvent = await sbJson<{ event: { payload: unknown } }>(['event', 'show', received.id]);
    assert.deepEqual(shownEvent.event.payload, JSON.parse(raw));
    assert.match(await sbText(['event', 'list', slug]), /pull_request\.opened/);
    const replayed = await sbJson<{ event: { replay_of: string }; todos: { id: string }[] }>([
      'event',
      'replay',
      received.id,
    ]);
    assert.equal(replayed.event.replay_of, received.id);
    assert.notEqual(replayed.todos[0]?.id, received.todo_ids[0]);
    const set = await sbJson<{ secret?: string; previous_valid_until: string | null }>(
      ['webhook', 'set-secret', gh.webhook.id, '--secret-stdin'],
      'whsec_issuedByTheProvider0123456789\n',
    );
    assert.equal(set.secret, undefined);
    assert.ok(set.previous_valid_until);

    const bad = await sb(['todo', 'push', slug, '--title', 'x', '--max-attempts', '1000']);
    assert.equal(bad.code, 2);
    assert.equal(bad.stdout, '');
    assert.equal(bad.stderr, 'switchboard: --max-attempts: must be a whole number from 1 to 100\n');

    const early = await sb(['endpoint', 'delete', slug]);
    assert.equal(early.code, 1);
    assert.match(early.stderr, /^switchboard: .*\(conflict\)\n$/);

    const revoked = await sbJson<{ endpoint: Endpoint; dead_lettered: number }>(['endpoint', 'revoke', slug]);
    assert.equal(revoked.endpoint.state, 'revoked');
    // The two pushed todos, the delivery's and its replay's.
    assert.equal(revoked.dead_lettered, 4);
    const dead = await sbJson<TodoAnswer>(['todo', 'show', pushed.todo.id]);
    assert.equal(dead.todo.state, 'failed');
    assert.match(JSON.stringify(dead.todo.error), /endpoint_revoked/);
    assert.match(await sbText(['todo', 'show', pushed.todo.id]), /state\s+failed/);

    assert.deepEqual(await sbJson(['endpoint', 'delete', slug]), { deleted: true });
    const gone = await sb(['endpoint', 'show', slug]);
    assert.equal(gone.code, 1);
    assert.match(gone.stderr, /\(not_found\)\n$/);

    const logout = await sbJson<{ revoked: boolean }>(['logout']);
    assert.equal(logout.revoked, true);
    const signedOut = await sb(['whoami']);
    assert.equal(signedOut.code, 1);
    assert.match(signedOut.stderr, /not signed in/);
  },
);
