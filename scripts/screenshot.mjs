// Takes the board screenshot the README shows (docs/images/board.png), so it can be redone
// after the board changes. It starts the compiled `serve` (run `npm run build` first) on a
// throwaway database of SWITCHBOARD_TEST_DATABASE_URL's server, creates the first admin
// through the setup link as a newcomer would, vends three endpoints, pushes todos over the
// API, has agents claim, complete and fail some over /mcp (their sessions stay open, so
// the endpoint cards show them live), then signs in to the board in Debian's Chromium
// (playwright-core) and saves the queues page. Everything goes through the real CLI, HTTP
// and MCP; nothing is imported from src/.
//
//   SWITCHBOARD_TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node scripts/screenshot.mjs [OUT.png]
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, stat } from 'node:fs/promises';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = process.argv[2] ?? join(root, 'docs', 'images', 'board.png');
const admin = process.env.SWITCHBOARD_TEST_DATABASE_URL;
if (!admin) {
  process.stderr.write('screenshot: set SWITCHBOARD_TEST_DATABASE_URL (a superuser URL)\n');
  process.exit(2);
}
const EMAIL = 'ada@example.com';
const PASSWORD = 'correct horse battery';

async function withAdmin(sql) {
  const c = new pg.Client({ connectionString: admin });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

function freePort() {
  return new Promise((resolve) => {
    const s = http.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

const database = `sb_screenshot_${randomBytes(4).toString('hex')}`;
const url = new URL(admin);
url.pathname = `/${database}`;
await withAdmin(`CREATE DATABASE ${database}`);
const port = await freePort();
const base = `http://127.0.0.1:${port}`;
const serve = spawn(process.execPath, [join(root, 'bin', 'switchboard.js'), 'serve'], {
  env: {
    PATH: process.env.PATH,
    SWITCHBOARD_DATABASE_URL: url.toString(),
    SWITCHBOARD_LISTEN: `127.0.0.1:${port}`,
    SWITCHBOARD_LOG_LEVEL: 'warn',
  },
  stdio: ['ignore', 'inherit', 'pipe'],
});
const exited = new Promise((done) => serve.on('exit', (code, signal) => done(code ?? signal)));
// The setup link is the one plain line serve writes on stderr with no humans yet.
const setupToken = new Promise((resolve) => {
  let seen = '';
  serve.stderr.setEncoding('utf8').on('data', (chunk) => {
    seen += chunk;
    const match = /\/setup\/(sbs_[A-Za-z0-9_-]+)/.exec(seen);
    if (match) resolve(match[1]);
  });
});

async function api(method, path, body, token) {
  const res = await globalThis.fetch(`${base}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return JSON.parse(text);
}

/** An agent's MCP session (JSON-RPC over Streamable HTTP), left open so the board shows it. */
async function agent(credential, name) {
  const headers = { authorization: `Bearer ${credential}`, accept: 'application/json, text/event-stream' };
  let id = 0;
  async function rpc(method, params, extra = {}) {
    const res = await globalThis.fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { ...headers, ...extra, 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', ...(params === undefined ? {} : { params }), method, id: ++id }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const message = text.trim().startsWith('{')
      ? JSON.parse(text)
      : text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .map((l) => JSON.parse(l.slice(5)))
          .find((m) => 'result' in m || 'error' in m);
    if (!message || message.error || message.result?.isError) throw new Error(`${method} failed: ${text}`);
    return { message, session: res.headers.get('mcp-session-id') };
  }
  const init = await rpc('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name, version: '1.0.0' },
  });
  const inSession = {
    ...(init.session ? { 'mcp-session-id': init.session } : {}),
    'mcp-protocol-version': init.message.result.protocolVersion,
  };
  await globalThis.fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { ...headers, ...inSession, 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
  });
  return async (tool, args) =>
    (await rpc('tools/call', { name: tool, arguments: args }, inSession)).message.result.structuredContent;
}

let code = 0;
try {
  const token = await setupToken;
  await api('POST', '/api/v1/setup', { token, email: EMAIL, password: PASSWORD, display_name: 'Ada' });
  const { token: apiToken } = await api('POST', '/api/v1/auth/login', { email: EMAIL, password: PASSWORD });

  const endpoints = [
    { name: 'reviewer', slug: 'reviewer', queues: ['inbox'] },
    { name: 'triage', slug: 'triage', queues: ['inbox'] },
    { name: 'release notes', slug: 'release-notes', queues: ['inbox'] },
  ];
  const credentials = {};
  for (const e of endpoints) credentials[e.slug] = (await api('POST', '/api/v1/endpoints', e, apiToken)).credential;

  const push = (slug, todo) => api('POST', `/api/v1/endpoints/${slug}/todos`, { queue: 'inbox', ...todo }, apiToken);
  for (const title of [
    'Review PR #418: retry budget per queue',
    'Review PR #421: board dark mode',
    'Check the 0039 migration for a missing index',
    'Review PR #425: OIDC group claims',
  ])
    await push('reviewer', { title });
  for (const title of ['Label new issues from the weekend', 'Find duplicates of #311']) await push('triage', { title });
  await push('triage', { title: 'Summarise the nightly fuzz run', max_attempts: 1 });
  await push('triage', { title: 'Reproduce the flaky board test' });
  for (const title of ['Draft the 0.2.0 release notes', 'List breaking changes since 0.1.0'])
    await push('release-notes', { title });

  // Agents at work: some todos done, one failed, a few claimed right now.
  const reviewer = await agent(credentials.reviewer, 'claude-code');
  const triage = await agent(credentials.triage, 'triage-bot');
  await agent(credentials['release-notes'], 'claude-code');
  const first = await reviewer('claim_next', {});
  await reviewer('complete', { id: first.todo.id, lease_token: first.lease_token, summary: 'approved' });
  await reviewer('claim_next', {});
  for (let i = 0; i < 2; i++) {
    const { todo, lease_token } = await triage('claim_next', {});
    await triage('complete', { id: todo.id, lease_token, summary: 'done' });
  }
  const { todo: flaky, lease_token } = await triage('claim_next', {});
  await triage('fail', { id: flaky.id, lease_token, error: 'the fuzz log was truncated', retry: false });
  await triage('claim_next', {});

  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'],
  });
  try {
    const context = await browser.newContext({ baseURL: base, viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto('/login');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`${base}/`);
    await page.getByRole('heading', { name: 'Queues', level: 1 }).waitFor();
    await page.waitForLoadState('networkidle').catch(() => undefined);
    await mkdir(dirname(out), { recursive: true });
    await page.screenshot({ path: out, fullPage: true });
  } finally {
    await browser.close();
  }
  const { size } = await stat(out);
  process.stdout.write(`screenshot: ${out} (${Math.round(size / 1024)} KB)\n`);
} catch (err) {
  process.stderr.write(`screenshot failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  code = 1;
} finally {
  serve.kill('SIGTERM');
  await exited;
  await withAdmin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
}
process.exit(code);
